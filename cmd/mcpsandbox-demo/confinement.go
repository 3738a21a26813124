package main

import (
	"errors"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
)

// confinementProblem names the parts of the default confinement this
// machine cannot enforce, with their fixes; nil when it can enforce all.
func confinementProblem() error {
	r := sandbox.Doctor()
	if r.OK() {
		return nil
	}
	var missing []string
	for _, c := range r.Checks {
		if !c.Required || c.OK {
			continue
		}
		m := c.Part + ": " + c.Detail
		if c.Fix != "" {
			m += " (fix: " + field.Refs(c.Fix, settingName) + ")"
		}
		missing = append(missing, m)
	}
	return errors.New(strings.Join(missing, "; "))
}

// settingName names a field in a fix: the demo has no run flags of its own,
// so it points to where they are described.
func settingName(f string) string {
	if f == field.Doctor {
		return "`mcpsandbox doctor`"
	}
	return "the " + f + " setting (`mcpsandbox help run`)"
}
