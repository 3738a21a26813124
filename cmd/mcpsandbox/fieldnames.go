package main

import (
	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/resolve"
)

// flagOf names a policy field as the run flag that sets it: errors from
// policy and sandbox name fields, and on the command line the user knows
// them as flags.
func flagOf(f string) string {
	switch f {
	case "Command":
		return "after --"
	case field.Doctor:
		return "`mcpsandbox doctor`"
	case "StateDir": // the sandbox's name for the directory --state places
		return "the state directory (--state)"
	case resolve.PolicyField:
		return "--policy"
	}
	for _, rf := range runFlags {
		if rf.Field == f {
			return "--" + rf.Name
		}
	}
	return f
}
