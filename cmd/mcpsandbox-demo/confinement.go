package main

import (
	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
)

// confinementProblem names the parts of the default confinement this
// machine cannot enforce, with their fixes; nil when it can enforce all.
func confinementProblem() error { return sandbox.Doctor().Problem(settingName) }

// settingName names a field in a fix: the demo has no run flags of its own,
// so it points to where they are described.
func settingName(f string) string {
	if f == field.Doctor {
		return "`mcpsandbox doctor`"
	}
	return "the " + f + " setting (`mcpsandbox help run`)"
}
