package npmregistry_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testregistry"
	"github.com/mcpsandbox/mcpsandbox/npmregistry"
)

const (
	goodName    = "@scope/server"
	goodVersion = "1.0.0"
	goodSpec    = goodName + "@" + goodVersion
	cooldown    = 48 * time.Hour
)

var goodBundle = []byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","verificationMaterial":{},"dsseEnvelope":{"payload":"e30=","payloadType":"application/vnd.in-toto+json","signatures":[]}}`)

// provenanceRegistry serves one package published at published, with a
// signature and an attestation.
func provenanceRegistry(t *testing.T, published time.Time) (*testregistry.Registry, *npmregistry.Client) {
	reg := testregistry.New(t)
	reg.Publish(testregistry.Package{Name: goodName, Version: goodVersion, Published: published,
		Files: map[string]string{"index.js": "#!/usr/bin/env node\n"}})
	reg.AddAttestation(goodName, goodVersion, npmregistry.PublishPredicate, []byte(`{"publish":true}`))
	reg.AddAttestation(goodName, goodVersion, npmregistry.ProvenancePredicate, goodBundle)
	c, err := npmregistry.New(reg.Start())
	if err != nil {
		t.Fatal(err)
	}
	return reg, c
}

// checkAll runs every check prepare makes of a version and returns the
// first refusal.
func checkAll(t *testing.T, c *npmregistry.Client, now time.Time) (npmregistry.Signed, error) {
	v, err := c.Resolve(t.Context(), goodSpec)
	if err != nil {
		return 0, err
	}
	var tgz bytes.Buffer
	if err := c.Tarball(t.Context(), v, &tgz); err != nil {
		return 0, err
	}
	signed, err := c.CheckSignatures(t.Context(), v)
	if err != nil {
		return 0, err
	}
	return signed, npmregistry.CheckCooldown(v, now, cooldown)
}

// A package as published passes every check, and its attestation bundles
// are handed over as the registry served them.
func TestGoodPackagePasses(t *testing.T) {
	_, c := provenanceRegistry(t, day0)
	signed, err := checkAll(t, c, day0.Add(cooldown))
	if err != nil || signed != npmregistry.SignedByRegistry {
		t.Fatalf("checks: %v, %v; want %v and no error", signed, err, npmregistry.SignedByRegistry)
	}
	v, err := c.Resolve(t.Context(), goodSpec)
	if err != nil {
		t.Fatal(err)
	}
	atts, err := c.Attestations(t.Context(), v)
	if err != nil {
		t.Fatal(err)
	}
	if len(atts) != 2 || atts[1].PredicateType != npmregistry.ProvenancePredicate || !bytes.Equal(atts[1].Bundle, goodBundle) {
		t.Errorf("attestations %+v, want the publish attestation and the bundle as given", atts)
	}
}

// Each thing that can be wrong with a package is refused, the message
// naming it.
func TestTamperedPackagesAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(*testregistry.Registry)
		now    time.Time
		want   string
	}{
		{"tampered tarball", func(r *testregistry.Registry) { r.TamperTarball(goodName, goodVersion) }, day0.Add(cooldown),
			"the tarball's sha512 is sha512-"},
		{"signature by another key", func(r *testregistry.Registry) { r.ForgeSignature(goodName, goodVersion) }, day0.Add(cooldown),
			"the registry signature of " + goodSpec + " by key SHA256:"},
		{"key not served", func(r *testregistry.Registry) { r.RotateKey() }, day0.Add(cooldown),
			goodSpec + " is signed by key SHA256:"},
		{"expired key", func(r *testregistry.Registry) { r.ExpireKey(day0.Add(-time.Hour)) }, day0.Add(cooldown),
			goodSpec + " was published 2026-01-02T03:04:05Z, after the registry's key SHA256:"},
		{"missing signature", func(r *testregistry.Registry) { r.Unsign(goodName, goodVersion) }, day0.Add(cooldown),
			goodSpec + " has no registry signature though the registry signs its packages: it did not come through the registry's publish; do not install it"},
		{"too young", func(*testregistry.Registry) {}, day0.Add(3 * time.Hour),
			goodSpec + " was published 3h ago (2026-01-02 03:04 UTC), younger than the cooldown of 48h: wait until 2026-01-04 03:04 UTC or pass --cooldown 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, c := provenanceRegistry(t, day0)
			tc.tamper(reg)
			_, err := checkAll(t, c, tc.now)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v\nwant one containing %q", err, tc.want)
			}
			t.Log(err)
		})
	}
}

// A key that expired after the version was published still vouches for it,
// as npm has it: keys are rotated, not revoked, by expiring them.
func TestKeyExpiredAfterPublishingStillVerifies(t *testing.T) {
	reg, c := provenanceRegistry(t, day0)
	reg.ExpireKey(day0.Add(time.Hour))
	if signed, err := checkAll(t, c, day0.Add(cooldown)); err != nil || signed != npmregistry.SignedByRegistry {
		t.Fatalf("checks: %v, %v", signed, err)
	}
}

// A registry that serves no keys is reported as such, not as a pass, and
// a signature that was never made is not asked for.
func TestRegistryWithoutKeys(t *testing.T) {
	reg, c := provenanceRegistry(t, day0)
	reg.ServeNoKeys()
	reg.Unsign(goodName, goodVersion)
	signed, err := checkAll(t, c, day0.Add(cooldown))
	if err != nil || signed != npmregistry.RegistryServesNoKeys {
		t.Fatalf("checks: %v, %v; want %v", signed, err, npmregistry.RegistryServesNoKeys)
	}
	if got := signed.String(); got != "not signed by this registry (it serves no keys)" {
		t.Errorf("reported as %q", got)
	}
	if _, err := c.Keys(t.Context()); !errors.Is(err, npmregistry.ErrNoKeys) {
		t.Errorf("Keys: %v, want ErrNoKeys", err)
	}
}

// No cooldown takes any version; a version with no publish time cannot be
// judged against one.
func TestCooldownEdges(t *testing.T) {
	v := &npmregistry.Version{Name: "pkg", Version: "1.0.0", Published: day0}
	if err := npmregistry.CheckCooldown(v, day0, 0); err != nil {
		t.Errorf("--cooldown 0: %v", err)
	}
	var young *npmregistry.TooYoungError
	if err := npmregistry.CheckCooldown(v, day0.Add(47*time.Hour+59*time.Minute), cooldown); !errors.As(err, &young) || young.Age != 47*time.Hour+59*time.Minute {
		t.Errorf("a minute short of the cooldown: %v", err)
	}
	v.Published = time.Time{}
	want := "the registry gives no publish time for pkg@1.0.0, so its age cannot be checked against the cooldown of 48h: pass --cooldown 0 to take it anyway"
	if err := npmregistry.CheckCooldown(v, day0, cooldown); err == nil || err.Error() != want {
		t.Errorf("no publish time: %v, want %q", err, want)
	}
}

func TestIntegrity(t *testing.T) {
	data := []byte("a tarball")
	if err := npmregistry.CheckIntegrity(bytes.NewReader(data), "sha1-abc "+npmregistry.Integrity(data)); err != nil {
		t.Errorf("matching integrity: %v", err)
	}
	if err := npmregistry.CheckIntegrity(bytes.NewReader(data), npmregistry.Integrity([]byte("another"))); err == nil || !strings.Contains(err.Error(), "not the published sha512-") {
		t.Errorf("other bytes: %v", err)
	}
	if err := npmregistry.CheckIntegrity(bytes.NewReader(data), "sha1-3Hp8Ww=="); err == nil || !strings.Contains(err.Error(), "names no sha512, sha384 or sha256 digest") {
		t.Errorf("sha1 only: %v", err)
	}
}

// As npm has it, every signature a version lists must verify, not just one:
// a second signature by a key the registry does not serve is refused.
func TestEverySignatureMustVerify(t *testing.T) {
	served, servedID := testregistry.NewKey(t)
	other, otherID := testregistry.NewKey(t)
	v := &npmregistry.Version{Name: "pkg", Version: "1.0.0", Integrity: npmregistry.Integrity([]byte("x")), Published: day0}
	sign := func(key *ecdsa.PrivateKey, id string) npmregistry.Signature {
		sum := sha256.Sum256([]byte("pkg@1.0.0:" + v.Integrity))
		sig, err := ecdsa.SignASN1(rand.Reader, key, sum[:])
		if err != nil {
			t.Fatal(err)
		}
		return npmregistry.Signature{KeyID: id, Sig: base64.StdEncoding.EncodeToString(sig)}
	}
	keys := []npmregistry.Key{{KeyID: servedID, Public: &served.PublicKey}}
	v.Signatures = []npmregistry.Signature{sign(served, servedID)}
	if err := npmregistry.VerifySignatures(v, keys); err != nil {
		t.Fatalf("one good signature: %v", err)
	}
	v.Signatures = append(v.Signatures, sign(other, otherID))
	want := "pkg@1.0.0 is signed by key " + otherID + ", which the registry does not serve"
	if err := npmregistry.VerifySignatures(v, keys); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a second signature by another key: %v\nwant %q", err, want)
	}
}
