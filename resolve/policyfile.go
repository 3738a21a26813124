package resolve

import (
	"errors"
	"reflect"

	"github.com/mcpsandbox/mcpsandbox/policies"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// withPolicy returns the policy file (relative to dir) or built-in ref with every given
// field of over applied over it, validated, with where the file's values
// came from (the fields over left alone) and the extends chain. An error
// names what a file set as section.key at file:line:col, and the rest as
// fields.
func withPolicy(ref, dir string, given map[string]bool, over policy.Policy, vars policy.Vars) (policy.Policy, policy.Origin, []string, error) {
	if ref == "default" {
		// The built-in default is policy.Default key by key (a test in
		// package policies says so): the overrides over it need no YAML read.
		p := policy.Default()
		for f := range given {
			overrideField(&p, &over, f)
		}
		p.Command = over.Command
		if _, err := selectNet(&p, given, over); err != nil {
			return p, policy.Origin{}, []string{"built-in default"}, err
		}
		return p, policy.Origin{}, []string{"built-in default"}, p.Validate()
	}
	p, origin, chain, err := policy.Loader{Builtin: policies.FS, Vars: vars, Dir: dir}.LoadChain(ref)
	if err != nil {
		var fe *policy.FileError
		if !errors.As(err, &fe) {
			err = refError(ref, err)
		}
		return p, origin, chain, err
	}
	for f := range given {
		overrideField(&p, &over, f)
		delete(origin, f)
	}
	p.Command = over.Command
	selected, err := selectNet(&p, given, over)
	if err != nil {
		return p, origin, chain, err
	}
	if selected {
		delete(origin, "Net") // the caller's --allow-host chose it
	}
	return p, origin, chain, origin.Validate(&p)
}

// selectNet is the caller's level of the network mode (policy.SelectNet):
// its allow-hosts select egress over a file's mode, unless it gives a mode
// too.
func selectNet(p *policy.Policy, given map[string]bool, over policy.Policy) (bool, error) {
	return p.SelectNet(given["Net"], given["AllowHosts"] && len(over.AllowHosts) > 0)
}

// overrideField sets name in dst from src; a list is added to.
func overrideField(dst, src *policy.Policy, name string) {
	d := reflect.ValueOf(dst).Elem().FieldByName(name)
	s := reflect.ValueOf(src).Elem().FieldByName(name)
	if d.Kind() == reflect.Slice {
		d.Set(reflect.AppendSlice(d, s))
		return
	}
	d.Set(s)
}
