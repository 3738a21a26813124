package main

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/mcpsandbox/mcpsandbox/policies"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

const policyUsage = "Start from the policy file FILE or the built-in policy NAME instead of the built-in chosen by the command (see mcpsandbox policy list); flags given beside it override its values, and --ro, --rw, --tmpfs and --env add to its lists. FILE has a / in it or ends in .yaml; its format is documented in docs/policy.md."

// withPolicyFile returns the policy run uses: the policy file or built-in
// ref with every flag the command line gave applied over it, validated,
// with where the file's values came from (the fields a flag set left out)
// and the extends chain. An error names what a file set as section.key at
// file:line:col, and the rest as flags.
func withPolicyFile(ref string, given map[string]bool, flagged policy.Policy, vars policy.Vars) (policy.Policy, policy.Origin, []string, error) {
	if ref == "default" {
		// The built-in default is policy.Default key by key (a test in
		// package policies says so): the flags over it need no YAML read.
		return flagged, policy.Origin{}, []string{"built-in default"}, flagged.Validate()
	}
	p, origin, chain, err := policy.Loader{Builtin: policies.FS, Vars: vars}.LoadChain(ref)
	if err != nil {
		var fe *policy.FileError
		if !errors.As(err, &fe) {
			err = fmt.Errorf("--policy %s: %w", ref, err)
		}
		return p, origin, chain, err
	}
	// Only flags actually given override the file.
	for field := range given {
		overrideField(&p, &flagged, field)
		delete(origin, field)
	}
	p.Command = flagged.Command
	return p, origin, chain, origin.Validate(&p)
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
