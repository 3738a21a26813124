package provenance

import (
	"fmt"
	"strings"

	"github.com/sigstore/sigstore-go/pkg/fulcio/certificate"
)

// Identity is who built a package version, as the Fulcio certificate that
// signed its provenance says (GitHub Actions' or GitLab CI's OIDC token).
type Identity struct {
	Issuer     string // the CI's OIDC issuer: https://token.actions.githubusercontent.com
	Repository string // the source repository: https://github.com/owner/repo
	Workflow   string // the build config within it, without a ref: .github/workflows/release.yml
	Commit     string // the source commit built
	Ref        string // the ref built: refs/tags/v1.2.0
}

// identityOf reads an Identity from a verified certificate's extensions.
func identityOf(s certificate.Summary) (Identity, error) {
	e := s.Extensions
	id := Identity{
		Issuer:     e.Issuer,
		Repository: e.SourceRepositoryURI,
		Workflow:   workflowPath(e.BuildConfigURI, e.SourceRepositoryURI),
		Commit:     e.SourceRepositoryDigest,
		Ref:        e.SourceRepositoryRef,
	}
	if id.Workflow == "" { // certificates from before build config URIs
		id.Workflow = workflowPath(e.BuildSignerURI, e.SourceRepositoryURI)
	}
	switch {
	case id.Issuer == "":
		return Identity{}, fmt.Errorf("the signing certificate (SAN %s) names no OIDC issuer", s.SubjectAlternativeName)
	case id.Repository == "":
		return Identity{}, fmt.Errorf("the signing certificate (SAN %s, issuer %s) names no source repository: it was not issued to a CI build", s.SubjectAlternativeName, id.Issuer)
	}
	return id, nil
}

// workflowPath is a build config URI relative to its repository, without
// the ref that changes with every release:
// https://github.com/o/r/.github/workflows/release.yml@refs/tags/v1 → .github/workflows/release.yml.
func workflowPath(uri, repository string) string {
	if i := strings.LastIndex(uri, "@"); i >= 0 {
		uri = uri[:i]
	}
	if rest, ok := strings.CutPrefix(uri, repository+"/"); ok && repository != "" {
		return strings.TrimLeft(rest, "/")
	}
	return uri
}

// SameIdentity refuses a version published by another identity than the one
// a lock records: another issuer, repository or workflow, or none (a zero
// got: the version has no provenance). The commit and ref change with every
// release and are not compared.
func SameIdentity(locked, got Identity) error {
	if got == (Identity{}) && locked != (Identity{}) {
		return fmt.Errorf("published without provenance, the lock pins provenance from %s: a version from another publisher is refused", locked.Repository)
	}
	for _, f := range []struct{ name, locked, got string }{
		{"issuer", locked.Issuer, got.Issuer},
		{"repository", locked.Repository, got.Repository},
		{"workflow", locked.Workflow, got.Workflow},
	} {
		if f.locked != f.got {
			return fmt.Errorf("published from %s %s, the lock pins %s: a version from another publisher is refused", f.name, orNone(f.got), orNone(f.locked))
		}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
