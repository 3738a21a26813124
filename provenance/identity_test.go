package provenance_test

import (
	"testing"

	"github.com/mcpsandbox/mcpsandbox/provenance"
	"github.com/mcpsandbox/mcpsandbox/provenance/provenancetest"
)

// Once a lock pins who published a package, a version built elsewhere is
// refused by name of what differs; a new release of the same workflow is not.
func TestSameIdentity(t *testing.T) {
	a := provenancetest.New(t)
	verify := func(id provenance.Identity) provenance.Identity {
		t.Helper()
		got, err := provenance.Verify(a.MakeBundle("@good/server", "1.0.0", tarball, id), pkgOf("@good/server", tarball), a.Root())
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	locked := verify(provenancetest.Good)

	release := provenancetest.Good
	release.Commit, release.Ref = "2222222222222222222222222222222222222222", "refs/tags/v1.1.0"
	if err := provenance.SameIdentity(locked, verify(release)); err != nil {
		t.Errorf("a release of the same workflow: %v", err)
	}

	if err, want := provenance.SameIdentity(locked, provenance.Identity{}), "published without provenance, the lock pins provenance from https://github.com/good/server: a version from another publisher is refused"; err == nil || err.Error() != want {
		t.Errorf("a version without provenance: %v\nwant %s", err, want)
	}

	for _, c := range []struct {
		name string
		edit func(*provenance.Identity)
		want string
	}{
		{"repository", func(id *provenance.Identity) { id.Repository = "https://github.com/evil/server" },
			"published from repository https://github.com/evil/server, the lock pins https://github.com/good/server: a version from another publisher is refused"},
		{"workflow", func(id *provenance.Identity) { id.Workflow = ".github/workflows/pr.yml" },
			"published from workflow .github/workflows/pr.yml, the lock pins .github/workflows/release.yml: a version from another publisher is refused"},
		{"issuer", func(id *provenance.Identity) { id.Issuer = "https://gitlab.com" },
			"published from issuer https://gitlab.com, the lock pins https://token.actions.githubusercontent.com: a version from another publisher is refused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := provenancetest.Good
			c.edit(&id)
			err := provenance.SameIdentity(locked, verify(id))
			if err == nil || err.Error() != c.want {
				t.Errorf("SameIdentity = %v\nwant %s", err, c.want)
			}
		})
	}
}
