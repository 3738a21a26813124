package policies_test

import (
	"io/fs"
	"reflect"
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

// Every built-in loads and is valid for a server.
func TestEveryBuiltinIsValid(t *testing.T) {
	names, err := fs.Glob(policies.FS, "*.yaml")
	if err != nil || len(names) == 0 {
		t.Fatalf("no built-in policies: %v", err)
	}
	for _, n := range names {
		name := n[:len(n)-len(".yaml")]
		vars := policy.Vars{Home: "/home/you", WorkDir: "/home/you/proj", State: "/home/you/.local/state/mcpsandbox/x"}
		p, origin, err := policy.Loader{Builtin: policies.FS, Vars: vars}.Load(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		p.Command = []string{"server"}
		if err := origin.Validate(&p); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
