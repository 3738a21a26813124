package npmregistry_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testregistry"
	"github.com/mcpsandbox/mcpsandbox/npmregistry"
)

// day0 is when the test's packages were published, long enough ago for any
// cooldown the tests use.
var day0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// specRegistry publishes versions whose highest, latest and tagged ones
// differ, so that each rule of npm's choice shows.
func specRegistry(t *testing.T) *npmregistry.Client {
	reg := testregistry.New(t)
	for i, p := range []testregistry.Package{
		{Name: "pkg", Version: "1.0.0"},
		{Name: "pkg", Version: "1.3.0-beta.1", Tag: "beta"},
		{Name: "pkg", Version: "1.4.0", Tag: "next"}, // higher than latest, in ^1
		{Name: "pkg", Version: "2.0.0", Tag: "two"},
		{Name: "pkg", Version: "2.1.0-rc.1", Tag: "rc"},
		{Name: "pkg", Version: "3.0.0"},
		{Name: "pkg", Version: "3.1.0", Deprecated: "broken, use 3.0.0"},
		{Name: "pkg", Version: "1.2.5"}, // latest, published last
		{Name: "@scope/tool", Version: "0.2.1", Files: map[string]string{"package.json": `{"mcpName": "io.github.scope/tool"}`}},
		{Name: "@scope/tool", Version: "0.3.0"},
	} {
		p.Published = day0.Add(time.Duration(i) * time.Hour)
		reg.Publish(p)
	}
	c, err := npmregistry.New(reg.Start())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Each spec form resolves to the version npm would install.
func TestResolveAsNpmDoes(t *testing.T) {
	c := specRegistry(t)
	for _, tc := range resolveCases {
		v, err := c.Resolve(t.Context(), tc.spec)
		if err != nil {
			t.Errorf("%s: %v", tc.spec, err)
			continue
		}
		if v.Version != tc.want {
			t.Errorf("%s resolved to %s, want %s", tc.spec, v.Version, tc.want)
		}
	}
}

// resolveCases are specs and the versions npm installs for them from
// specRegistry.
var resolveCases = []struct{ spec, want string }{
	{"pkg", "1.2.5"},                  // the latest tag
	{"pkg@latest", "1.2.5"},           // named
	{"pkg@*", "1.2.5"},                // any: latest
	{"pkg@^1.0.0", "1.2.5"},           // latest satisfies, though 1.4.0 is higher
	{"pkg@^1.3", "1.4.0"},             // latest does not satisfy: the highest that does
	{"pkg@1.x", "1.2.5"},              // x-range
	{"pkg@~1.2.0", "1.2.5"},           // tilde
	{"pkg@1.0.0", "1.0.0"},            // exact
	{"pkg@=1.0.0", "1.0.0"},           // exact, npm's loose form
	{"pkg@^2", "2.0.0"},               // 2.1.0-rc.1 is a prerelease nobody asked for
	{"pkg@>=2.1.0-rc.0", "3.0.0"},     // asked for a 2.1.0 prerelease, and 3.0.0 is higher
	{"pkg@~2.1.0-rc.0", "2.1.0-rc.1"}, // a prerelease of the tuple asked for
	{"pkg@1.3.0-beta.1", "1.3.0-beta.1"},
	{"pkg@beta", "1.3.0-beta.1"},  // a dist-tag
	{"pkg@next", "1.4.0"},         // another
	{"pkg@^3", "3.0.0"},           // 3.1.0 is deprecated
	{"pkg@3.1.0", "3.1.0"},        // but taken when named exactly
	{"pkg@1 || ^2", "1.2.5"},      // alternatives
	{"pkg@>=2.0.0 <3", "2.0.0"},   // an intersection
	{"@scope/tool", "0.3.0"},      // scoped
	{"@scope/tool@^0.2", "0.2.1"}, // ^0.2 is <0.3.0
}

// What cannot be resolved is refused with what to do instead.
func TestResolveRefusals(t *testing.T) {
	c := specRegistry(t)
	for _, tc := range []struct{ spec, want string }{
		{"pkg@^9", `no version of pkg on ` + c.Registry + ` satisfies "^9" (latest is 1.2.5)`},
		{"pkg@9.9.9", `has no version 9.9.9 of pkg (latest is 1.2.5)`},
		{"pkg@nosuchtag", `has no dist-tag "nosuchtag" of pkg, and it is no version range: its tags are beta → 1.3.0-beta.1, latest → 1.2.5, next → 1.4.0, rc → 2.1.0-rc.1, two → 2.0.0`},
		{"nosuchpkg", `has no package nosuchpkg (404): check the name, or the registry (npm_config_registry)`},
		{"@scope/nosuch@1", `has no package @scope/nosuch (404)`},
		{"github:user/repo", `"github:user/repo" is no package of a registry (a git, file, URL or alias spec is not resolved here): give NAME or NAME@VERSION`},
		{"user/repo", `is no package of a registry`},
		{"./dir", `is no package of a registry`},
		{"alias@npm:pkg@1", `is no package of a registry`},
		{"bad name", `"bad name" is no npm package name`},
	} {
		_, err := c.Resolve(t.Context(), tc.spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.spec, err, tc.want)
		}
	}
}

// A version's facts are what was published.
func TestVersionFacts(t *testing.T) {
	reg := testregistry.New(t)
	published := day0.Add(90 * time.Minute)
	integrity := reg.Publish(testregistry.Package{Name: "@scope/tool", Version: "0.2.1", Published: published,
		Files: map[string]string{"package.json": `{"mcpName": "io.github.scope/tool"}`, "index.js": "console.log(1)\n"}})
	reg.AddAttestation("@scope/tool", "0.2.1", npmregistry.ProvenancePredicate, []byte(`{"mediaType": "x"}`))
	url := reg.Start()
	c, err := npmregistry.New(url)
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.Resolve(t.Context(), "@scope/tool@0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	_, keyID := reg.Key()
	switch {
	case v.String() != "@scope/tool@0.2.1":
		t.Errorf("version %s", v)
	case v.Integrity != integrity || !strings.HasPrefix(v.Integrity, "sha512-"):
		t.Errorf("integrity %q, want %q", v.Integrity, integrity)
	case v.Tarball != url+"@scope/tool/-/tool-0.2.1.tgz":
		t.Errorf("tarball %q", v.Tarball)
	case !v.Published.Equal(published):
		t.Errorf("published %s, want %s", v.Published, published)
	case v.MCPName != "io.github.scope/tool":
		t.Errorf("mcpName %q", v.MCPName)
	case len(v.Signatures) != 1 || v.Signatures[0].KeyID != keyID:
		t.Errorf("signatures %+v, want one by %s", v.Signatures, keyID)
	case v.Attestations == nil || v.Attestations.PredicateType != npmregistry.ProvenancePredicate || v.Attestations.URL != url+"-/npm/v1/attestations/@scope/tool@0.2.1":
		t.Errorf("attestations %+v", v.Attestations)
	}
}
