package provenance_test

import (
	"os"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/provenance"
)

// npm's own provenance bundles of the sigstore package, verified against the
// public-good root (SCTs and all), name the sigstore-js release workflow.
func TestRealNpmBundlesVerifyAgainstThePublicGoodRoot(t *testing.T) {
	trust, err := provenance.LoadRoot("testdata/public-good.trusted_root.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		version, integrity string
	}{
		{"2.0.0", "sha512-RtTi90xIdzFmQAAKb9+Ki1nx4IR2Z5c+mFn3dN0xuPHgk3gTt3f7ZqKsZ9UFQP40ZAlm7un8LMyjhwgrTIXNPA=="},
		{"1.3.0", "sha512-dhdv+jOAi1RgLHw13lxumk3rlgZtumUz9QrCNPTx9MazUnUV3BfAb74oYAMPQQ7uaeogB5vTosbz3POzKbEHUQ=="},
	} {
		t.Run(c.version, func(t *testing.T) {
			b, err := os.ReadFile("testdata/sigstore@" + c.version + ".provenance.json")
			if err != nil {
				t.Fatal(err)
			}
			id, err := provenance.Verify(b, provenance.Package{Name: "sigstore", Version: c.version, Integrity: c.integrity}, trust)
			if err != nil {
				t.Fatal(err)
			}
			if id.Issuer != "https://token.actions.githubusercontent.com" || id.Repository != "https://github.com/sigstore/sigstore-js" || id.Workflow != ".github/workflows/release.yml" {
				t.Errorf("identity %+v, want sigstore-js's release workflow on GitHub Actions", id)
			}
		})
	}
}
