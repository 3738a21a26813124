package provenance_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/provenance"
	"github.com/mcpsandbox/mcpsandbox/provenance/provenancetest"
)

var tarball = []byte("package/package.json: the tarball the registry serves")

func pkgOf(name string, tarball []byte) provenance.Package {
	return provenance.Package{Name: name, Version: "1.0.0", Integrity: provenancetest.Integrity(tarball)}
}

// A bundle the registry would serve for a package built by GitHub Actions
// verifies, and names who built it from the signing certificate.
func TestGoodBundleYieldsItsIdentity(t *testing.T) {
	a := provenancetest.New(t)
	doc := provenancetest.Attestations(a.MakeBundle("@good/server", "1.0.0", tarball, provenancetest.Good))
	b, ok, err := provenance.ProvenanceBundle(doc)
	if err != nil || !ok {
		t.Fatalf("ProvenanceBundle: %v, %v", ok, err)
	}
	id, err := provenance.Verify(b, pkgOf("@good/server", tarball), a.Root())
	if err != nil {
		t.Fatal(err)
	}
	if id != provenancetest.Good {
		t.Errorf("identity\n got %+v\nwant %+v", id, provenancetest.Good)
	}
}

// Each bundle that is not good provenance of this very package version is
// refused, with the check that failed and a message that says why.
func TestBadBundlesAreRefusedNamingTheCheck(t *testing.T) {
	a := provenancetest.New(t)
	good := a.MakeBundle("@good/server", "1.0.0", tarball, provenancetest.Good)
	publish, err := json.Marshal(map[string]any{
		"_type":         "https://in-toto.io/Statement/v1",
		"subject":       []any{map[string]any{"name": provenance.Purl("@good/server", "1.0.0"), "digest": map[string]string{"sha512": "00"}}},
		"predicateType": "https://github.com/npm/attestation/tree/main/specs/publish/v0.1",
		"predicate":     map[string]any{"name": "@good/server", "version": "1.0.0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		bundle []byte
		pkg    provenance.Package
		root   *provenance.Root
		check  provenance.Check
		says   string
	}{
		{"another tarball", good, pkgOf("@good/server", []byte("a tampered tarball")), a.Root(),
			provenance.CheckDigest, "it attests another tarball"},
		{"another package", a.MakeBundle("@evil/server", "1.0.0", tarball, provenancetest.Good), pkgOf("@good/server", tarball), a.Root(),
			provenance.CheckSubject, "the statement is about pkg:npm/%40evil/server@1.0.0, not pkg:npm/%40good/server@1.0.0"},
		{"another version", a.MakeBundle("@good/server", "0.9.0", tarball, provenancetest.Good), pkgOf("@good/server", tarball), a.Root(),
			provenance.CheckSubject, "not pkg:npm/%40good/server@1.0.0"},
		{"another Sigstore's root", good, pkgOf("@good/server", tarball), provenancetest.New(t).Root(),
			provenance.CheckTlog, "not enough verified log entries"},
		{"another Fulcio CA", good, pkgOf("@good/server", tarball), a.RootWithFulcioOf(provenancetest.New(t)),
			provenance.CheckCertificate, "does not chain to a Fulcio CA of the trusted root"},
		{"a tampered envelope", tamper(t, good), pkgOf("@good/server", tarball), a.Root(),
			provenance.CheckTlog, "does not match envelope payload hash"},
		{"another predicate", a.SignStatement(publish, provenancetest.Good), pkgOf("@good/server", tarball), a.Root(),
			provenance.CheckPredicateType, "not SLSA provenance"},
		{"no trusted root", good, pkgOf("@good/server", tarball), nil,
			provenance.CheckTrustedRoot, "cannot be verified without one"},
		{"not a bundle", []byte(`{"mediaType":"text/plain"}`), pkgOf("@good/server", tarball), a.Root(),
			provenance.CheckBundle, "unsupported media type"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := provenance.Verify(c.bundle, c.pkg, c.root)
			var perr *provenance.Error
			if !errors.As(err, &perr) {
				t.Fatalf("Verify = %v, want a refusal", err)
			}
			if perr.Check != c.check || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), string(c.check)+" check failed") {
				t.Errorf("Verify = %q (check %q), want check %q saying %q", err, perr.Check, c.check, c.says)
			}
		})
	}
}

// tamper changes the signed statement's digest after signing, as a registry
// (or a proxy before it) that swapped the tarball would have to.
func tamper(t *testing.T, bundle []byte) []byte {
	var b map[string]any
	if err := json.Unmarshal(bundle, &b); err != nil {
		t.Fatal(err)
	}
	env := b["dsseEnvelope"].(map[string]any)
	st := decodePayload(t, env["payload"].(string))
	st = strings.Replace(st, `"sha512":"`, `"sha512":"ff`, 1)
	env["payload"] = encodePayload(st)
	out, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
