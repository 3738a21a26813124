package provenance_test

import (
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
	b := a.MakeBundle("@good/server", "1.0.0", tarball, provenancetest.Good)
	id, err := provenance.Verify(b, pkgOf("@good/server", tarball), a.Root())
	if err != nil {
		t.Fatal(err)
	}
	if id != provenancetest.Good {
		t.Errorf("identity\n got %+v\nwant %+v", id, provenancetest.Good)
	}
}
