package supervisor

import (
	"reflect"
	"slices"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
)

// SpecOf hands the sandbox every setting: a policy with each field away
// from its zero value makes a Spec with none of its fields zero, and a
// variable passed by name takes its value from the environment given, not
// the process's.
func TestSpecOfCarriesEverySetting(t *testing.T) {
	env := map[string]string{"PASSED": "v"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	p := policy.Default()
	p.Command = []string{"srv"}
	p.Env = []string{"PASSED", "SET=1", "UNSET", "PATH"}
	p.WorkDir, p.Tmpfs, p.State = "/srv", []string{"/opt/x"}, true
	p.ReadOnly, p.ReadWrite = []string{"/a"}, []string{"/b"}
	p.Net, p.User, p.FileSize, p.NoExecTmp = policy.NetHost, "nobody", 1<<20, true
	p.SeccompLog, p.CPU = true, 1
	spec := SpecOf("srv", p, "/var/lib/mcpsandbox/srv", lookup)
	if !slices.Equal(spec.Env, []string{"PASSED=v", "SET=1"}) {
		t.Errorf("env %q: want the passed variable's value from the environment given, the unset ones (PATH too) left out", spec.Env)
	}
	if spec.Net != sandbox.NetHost {
		t.Errorf("net %s, want host", spec.Net)
	}
	v := reflect.ValueOf(spec)
	for i := range v.NumField() {
		if name := v.Type().Field(i).Name; v.Field(i).IsZero() && name != "Unconfined" && name != "Inherit" {
			t.Errorf("Spec.%s is zero: SpecOf does not carry it", name)
		}
	}
	if got := SpecOf("srv", p, "", nil).Env; !slices.Equal(got, []string{"SET=1"}) {
		t.Errorf("env %q with no environment given: want only the set variable", got)
	}
}
