package policy

import (
	"reflect"
	"testing"
)

// Every Policy field but Command has exactly one key, and every key names a
// field; no two keys share a path.
func TestKeysMapOneToOneOntoPolicy(t *testing.T) {
	ptype := reflect.TypeFor[Policy]()
	byField, byPath := map[string]string{}, map[string]bool{}
	for _, k := range keys {
		if _, ok := ptype.FieldByName(k.Field); !ok {
			t.Errorf("%s names Policy.%s, which does not exist", k.Path(), k.Field)
		}
		// env.pass and env.set are the two forms of --env NAME[=VALUE].
		if prev, dup := byField[k.Field]; dup && k.Field != "Env" {
			t.Errorf("Policy.%s is set by both %s and %s", k.Field, prev, k.Path())
		}
		if byPath[k.Path()] {
			t.Errorf("key %s is listed twice", k.Path())
		}
		byField[k.Field], byPath[k.Path()] = k.Path(), true
	}
	for i := range ptype.NumField() {
		name := ptype.Field(i).Name
		if _, ok := byField[name]; !ok && name != "Command" {
			t.Errorf("Policy.%s has no policy-file key", name)
		}
	}
	if KeyOf("Memory") != "limits.memory" || KeyOf("Unconfined") != "unconfined" || KeyOf("Command") != "Command" {
		t.Errorf("KeyOf: Memory=%s Unconfined=%s Command=%s", KeyOf("Memory"), KeyOf("Unconfined"), KeyOf("Command"))
	}
}
