package provenance_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/provenance"
	"github.com/mcpsandbox/mcpsandbox/provenance/provenancetest"
)

// The trusted root comes through TUF; once fetched, a prepare without the
// repository uses the cached copy, and says so; without either, fetching is
// an error that names the way out, never a silent pass.
func TestRootThroughTUFThenFromItsCache(t *testing.T) {
	a := provenancetest.New(t)
	srv, tufRoot := tufRepo(t, a.TrustedRootJSON())
	cache := t.TempDir()
	bundle := a.MakeBundle("@good/server", "1.0.0", tarball, provenancetest.Good)
	verifies := func(r *provenance.Root) {
		t.Helper()
		if _, err := provenance.Verify(bundle, pkgOf("@good/server", tarball), r); err != nil {
			t.Errorf("with the root from %s: %v", r.Source(), err)
		}
	}

	r, err := provenance.FetchRoot(context.Background(), cache, srv.URL, tufRoot)
	if err != nil {
		t.Fatal(err)
	}
	if r.Source() != srv.URL {
		t.Errorf("source %q, want %s", r.Source(), srv.URL)
	}
	verifies(r)

	srv.Close()
	r, err = provenance.FetchRoot(context.Background(), cache, srv.URL, tufRoot)
	if err != nil {
		t.Fatalf("with the repository gone and a cached root: %v", err)
	}
	if want := cache + " (cached; " + srv.URL + " failed: "; !strings.HasPrefix(r.Source(), want) {
		t.Errorf("source %q, want %q…", r.Source(), want)
	}
	verifies(r)

	empty := t.TempDir()
	_, err = provenance.FetchRoot(context.Background(), empty, srv.URL, tufRoot)
	if err == nil {
		t.Fatal("with the repository gone and no cached root, fetching succeeded")
	}
	for _, want := range []string{"the Sigstore trusted root could not be fetched from " + srv.URL, empty + " holds no valid copy", "MCPSANDBOX_SIGSTORE_ROOT=FILE"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// A TUF mirror that never answers does not hold a prepare up beyond its
// context (go-tuf's own fetcher would wait for ever).
func TestHangingRootMirrorEndsWithTheContext(t *testing.T) {
	_, tufRoot := tufRepo(t, provenancetest.New(t).TrustedRootJSON())
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-stop }))
	defer srv.Close()
	defer close(stop)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := provenance.FetchRoot(ctx, t.TempDir(), srv.URL, tufRoot)
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("fetchRoot = %v, want the context's end", err)
	}
}

// A MCPSANDBOX_SIGSTORE_ROOT file that is no trusted root is refused naming the file.
func TestLoadRootRefusesAnotherFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "root.json")
	if err := os.WriteFile(path, []byte(`{"keys":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := provenance.LoadRoot(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+": not a Sigstore trusted root (trusted_root.json)") {
		t.Errorf("LoadRoot = %v", err)
	}
}
