package supervisor

import (
	"fmt"
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
	p.Command = []string{"node", "srv.js"}
	p.Env = []string{"PASSED", "SET=1", "UNSET", "PATH"}
	p.WorkDir, p.Tmpfs, p.State = "/srv", []string{"/opt/x"}, true
	p.ReadOnly, p.ReadWrite = []string{"/a"}, []string{"/b"}
	p.Net, p.User, p.FileSize, p.NoExecTmp = policy.NetHost, "nobody", 1<<20, true
	p.SeccompLog, p.CPU = true, 1
	spec := SpecOf("srv", p, "/var/lib/mcpsandbox/srv", lookup)
	if !slices.Equal(spec.Env, []string{"PASSED=v", "SET=1"}) {
		t.Errorf("env %q: want the passed variable's value from the environment given, the unset ones (PATH too) left out", spec.Env)
	}
	if spec.Script != "srv.js" {
		t.Errorf("script %q, want node's srv.js", spec.Script)
	}
	if spec.Net != sandbox.NetHost {
		t.Errorf("net %s, want host", spec.Net)
	}
	v := reflect.ValueOf(spec)
	for i := range v.NumField() {
		// Unconfined and Inherit are the unconfined path's; Capture is egress's
		// (below); Egress and Resolver are the relay's: who serves the listeners; CPUWeight 0
		// is the sandbox's default, which no policy setting changes.
		if name := v.Type().Field(i).Name; v.Field(i).IsZero() && !slices.Contains([]string{"Unconfined", "Inherit", "Capture", "Egress", "Resolver", "CPUWeight"}, name) {
			t.Errorf("Spec.%s is zero: SpecOf does not carry it", name)
		}
	}
	p.Net, p.AllowHosts = policy.NetEgress, []string{"api.example.test", "198.51.100.0/24:5432", "127.0.0.1:8080"}
	if c := SpecOf("srv", p, "", nil).Capture; !slices.Equal(c.Ports, []uint16{80, 443, 5432, 8080}) ||
		fmt.Sprint(c.Local) != "[198.18.0.0/15 198.51.100.0/24]" {
		t.Errorf("egress capture %+v: want the allowed ports, the synthetic range and the named range (not loopback: inside it is the server's own)", c)
	}
	if got := SpecOf("srv", p, "", nil).Env; !slices.Equal(got, []string{"SET=1"}) {
		t.Errorf("env %q with no environment given: want only the set variable", got)
	}
}
