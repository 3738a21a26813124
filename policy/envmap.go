package policy

import (
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// The two forms of the environment in a file: env.pass names variables
// whose values mcpsandbox passes on (--env NAME), env.set maps names to
// values (--env NAME=VALUE). Both fill Policy.Env.
const (
	envPassKey = "env.pass"
	envSetKey  = "env.set"
)

// setEnvMapping reads env.set: NAME: VALUE entries, values expanded.
func (d *decoder) setEnvMapping(k Key, n ast.Node, list *[]string) error {
	if isNull(n) {
		return nil
	}
	kvs, ok := entries(n)
	if !ok {
		return d.fail(n, &field.Error{Problem: envSetKey + " must be a mapping of variable names to values", Fix: "e.g. env: {set: {LOG_LEVEL: debug}}"})
	}
	for _, kv := range kvs {
		name, _ := keyName(kv)
		if !validEnvName(name) {
			return d.fail(kv.Key, &field.Error{Problem: envSetKey + " " + strconv.Quote(name) + ": is no variable name", Fix: "use letters, digits and _"})
		}
		s, ok := scalarOf(unwrap(kv.Value))
		if !ok || s.kind == "null" {
			return d.fail(kv.Key, &field.Error{Problem: envSetKey + ": " + name + " must have a value", Fix: "quote it: " + name + ": \"...\"; to pass mcpsandbox's own value list it under env.pass"})
		}
		d.noteState(s.text, kv.Value)
		val, err := d.vars.expand(s.text)
		if err != nil {
			return d.fail(kv.Value, &field.Error{Problem: envSetKey + " " + name, Err: err})
		}
		*list = append(*list, name+"="+val)
	}
	d.origin[k.Field] = posOf(d.file, n)
	return nil
}

// stateUse is the Origin entry for the first use of ${STATE}, which needs
// the state directory on.
const stateUse = "${STATE}"

func (d *decoder) noteState(text string, n ast.Node) {
	if _, seen := d.origin[stateUse]; !seen && strings.Contains(text, "${"+stateVar+"}") {
		d.origin[stateUse] = posOf(d.file, n)
	}
}
