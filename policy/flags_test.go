package policy

import (
	"reflect"
	"testing"
)

// Every Policy field but Command is named by a flag, and every flag names
// a field (cmd/mcpsandbox's test holds the names to run's own).
func TestEveryFieldHasAFlag(t *testing.T) {
	ptype := reflect.TypeFor[Policy]()
	for i := range ptype.NumField() {
		if name := ptype.Field(i).Name; name != "Command" && FlagOf(name) == name {
			t.Errorf("Policy.%s has no flag", name)
		}
	}
	for f := range flags {
		if _, ok := ptype.FieldByName(f); !ok {
			t.Errorf("flag --%s names Policy.%s, which does not exist", flags[f], f)
		}
	}
	if FlagOf("DenyTools") != "--deny-tool" || FlagOf("Command") != "Command" {
		t.Errorf("FlagOf: DenyTools=%s Command=%s", FlagOf("DenyTools"), FlagOf("Command"))
	}
}
