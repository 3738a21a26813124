package provenance_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/theupdateframework/go-tuf/v2/metadata"
)

// tufRepo serves, on loopback, a TUF repository (consistent snapshots, one
// key for every role) whose one target is trustedRoot as trusted_root.json,
// as Sigstore's repository serves the public-good root. It returns the
// server and the repository's root.json, the client's root of trust.
func tufRepo(t *testing.T, trustedRoot []byte) (*httptest.Server, []byte) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	key, err := metadata.KeyFromPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := signature.LoadED25519Signer(priv)
	if err != nil {
		t.Fatal(err)
	}
	expires := time.Now().Add(24 * time.Hour)
	root := metadata.Root(expires)
	for _, role := range []string{metadata.ROOT, metadata.TARGETS, metadata.SNAPSHOT, metadata.TIMESTAMP} {
		if err := root.Signed.AddKey(key, role); err != nil {
			t.Fatal(err)
		}
	}
	targets := metadata.Targets(expires)
	target, err := metadata.TargetFile().FromBytes("trusted_root.json", trustedRoot, "sha256")
	if err != nil {
		t.Fatal(err)
	}
	targets.Signed.Targets["trusted_root.json"] = target
	snapshot := metadata.Snapshot(expires)
	snapshot.Signed.Meta["targets.json"] = metadata.MetaFile(1)
	timestamp := metadata.Timestamp(expires)
	timestamp.Signed.Meta["snapshot.json"] = metadata.MetaFile(1)

	files := map[string][]byte{}
	sum := sha256.Sum256(trustedRoot)
	files["/targets/"+hex.EncodeToString(sum[:])+".trusted_root.json"] = trustedRoot
	for name, sign := range map[string]func() ([]byte, error){
		"/1.root.json":     func() ([]byte, error) { return signed(root, signer) },
		"/1.targets.json":  func() ([]byte, error) { return signed(targets, signer) },
		"/1.snapshot.json": func() ([]byte, error) { return signed(snapshot, signer) },
		"/timestamp.json":  func() ([]byte, error) { return signed(timestamp, signer) },
	} {
		if files[name], err = sign(); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(data)
	}))
	t.Cleanup(srv.Close)
	return srv, files["/1.root.json"]
}

func signed[T metadata.Roles](m *metadata.Metadata[T], s signature.Signer) ([]byte, error) {
	if _, err := m.Sign(s); err != nil {
		return nil, err
	}
	return m.ToBytes(false)
}
