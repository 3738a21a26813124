package policies_test

import (
	"io/fs"
	"reflect"
	"slices"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policies"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The built-in default is policy.Default, written out key by key.
func TestDefaultIsPolicyDefault(t *testing.T) {
	p, origin, err := policy.Loader{Builtin: policies.FS}.Load("default")
	if err != nil {
		t.Fatal(err)
	}
	if want := policy.Default(); !reflect.DeepEqual(p, want) {
		t.Errorf("built-in default is\n%+v\nwant policy.Default()\n%+v", p, want)
	}
	for _, k := range policy.Keys() {
		if _, ok := origin[k.Field]; !ok {
			t.Errorf("default.yaml does not write %s", k.Path())
		}
	}
}

// Every built-in loads and is valid for a server, read as policy check
// reads one: with no launch line, so its arguments are unknown.
func TestEveryBuiltinIsValid(t *testing.T) {
	names, err := fs.Glob(policies.FS, "*.yaml")
	if err != nil || len(names) == 0 {
		t.Fatalf("no built-in policies: %v", err)
	}
	for _, n := range names {
		name := n[:len(n)-len(".yaml")]
		vars := policy.Vars{Home: "/home/you", WorkDir: "/home/you/proj", State: "/home/you/.local/state/mcpsandbox/x", NoArgs: true}
		loadValid(t, name, vars)
	}
}

// The built-ins for web APIs reach only the hosts their comments name, in
// network mode egress; postgres the database of its URL argument.
func TestWebAPIBuiltinsAllowOnlyTheirHosts(t *testing.T) {
	url := "postgresql://app:secret@db.example.test:6543/shop"
	for name, want := range map[string][]string{
		"github":       {"api.github.com:443", "uploads.github.com:443", "raw.githubusercontent.com:443"},
		"gitlab":       {"gitlab.com:443"},
		"brave-search": {"api.search.brave.com:443"},
		"slack":        {"slack.com:443"},
		"postgres":     {"db.example.test:6543"},
		"fetch":        {"*"},
	} {
		vars := policy.Vars{Home: "/home/you", WorkDir: "/home/you", State: "/home/you/.local/state/mcpsandbox/x",
			Args: []string{"-y", "@modelcontextprotocol/server-postgres", url}, ServerArgs: []string{url}}
		p, ok := loadValid(t, name, vars)
		if !ok {
			continue
		}
		if p.Net != policy.NetEgress || !slices.Equal(p.AllowHosts, want) || len(p.DenyHosts) != 0 {
			t.Errorf("%s: network %s, allow %q, deny %q; want egress to %q alone", name, p.Net, p.AllowHosts, p.DenyHosts, want)
		}
	}
}

// loadValid loads the built-in name with vars and a launch line, and reports
// any error validating it; ok is false when it did not load at all.
func loadValid(t *testing.T, name string, vars policy.Vars) (p policy.Policy, ok bool) {
	t.Helper()
	p, origin, err := policy.Loader{Builtin: policies.FS, Vars: vars}.Load(name)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return p, false
	}
	p.Command = []string{"server"}
	if err := origin.Validate(&p); err != nil {
		t.Errorf("%s: %v", name, err)
	}
	return p, true
}
