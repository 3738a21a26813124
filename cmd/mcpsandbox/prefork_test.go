package main

import (
	"errors"
	"flag"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
)

// unfitForPrefork parses run's flags as runCommand does and reports whether
// the sandbox cannot use an init stage pre-forked with a network namespace:
// --help prints the manual only, --unconfined starts no sandbox, --net host
// wants no network namespace.
func unfitForPrefork(t *testing.T, args ...string) bool {
	t.Helper()
	p := policy.Default()
	fs := newFlagSet("run")
	bindRunFlags(fs, &p)
	err := fs.Parse(append(args, "--", "server"))
	if errors.Is(err, flag.ErrHelp) {
		return true
	}
	if err != nil {
		t.Fatalf("run %q: %v", args, err)
	}
	return p.Unconfined || p.Net == policy.NetHost
}

// The sandbox's ELF constructor pre-forks the first init stage from the
// command line alone, before any Go runs, with its own table of run's
// flags (sandbox.PreforkTrigger). The table must name the run command and
// real flags that each make a sandbox unfit, and cover every flag value
// that does.
func TestPreforkTriggerAgreesWithRunFlags(t *testing.T) {
	sub, unfit := sandbox.PreforkTrigger()
	if c := findCommand(sub); c == nil || reflect.ValueOf(c.Run).Pointer() != reflect.ValueOf(runCommand).Pointer() {
		t.Fatalf("the trigger's subcommand %q is not the run command", sub)
	}
	helpFlags := []string{"h", "help"} // the flag package's own
	for _, f := range unfit {
		name, value, hasValue := strings.Cut(f, "=")
		i := slices.IndexFunc(runFlags, func(r runFlag) bool { return r.Name == name })
		if i < 0 && !slices.Contains(helpFlags, name) {
			t.Errorf("the trigger names --%s, which is no run flag", name)
			continue
		}
		if !unfitForPrefork(t, "--"+f) {
			t.Errorf("the trigger names --%s, which leaves the sandbox fit for a pre-forked init stage", f)
		}
		if hasValue && !unfitForPrefork(t, "--"+name, value) {
			t.Errorf("the trigger names --%s %s, which leaves the sandbox fit for a pre-forked init stage", name, value)
		}
	}
	covered := func(name, value string) bool {
		return slices.Contains(unfit, name) || slices.Contains(unfit, name+"="+value)
	}
	ptype := reflect.TypeFor[policy.Policy]()
	for _, f := range append(slices.Clone(helpFlags), runFlagNames()...) {
		values := []string{"true"}
		if i := slices.IndexFunc(runFlags, func(r runFlag) bool { return r.Name == f }); i >= 0 {
			field, _ := ptype.FieldByName(runFlags[i].Field)
			values = []string{sampleValue(t, field.Type)}
			if field.Type.Kind() == reflect.String {
				values = append(values, policy.NetNone, policy.NetHost)
			}
		}
		for _, v := range values {
			if unfitForPrefork(t, "--"+f+"="+v) && !covered(f, v) {
				t.Errorf("--%s=%s makes a sandbox unfit for a pre-forked init stage, but the trigger does not name it", f, v)
			}
		}
	}
}

func runFlagNames() []string {
	var names []string
	for _, f := range runFlags {
		names = append(names, f.Name)
	}
	return names
}
