package demo

import (
	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Setting names a policy field in what the demo shows, as `mcpsandbox run`
// does: by its flag (DenyTools as --deny-tool), since run is what the
// demo's reader will configure; the host check is `mcpsandbox doctor`.
// The demo hands it to the supervisor (Options.Supervise) and the
// confinement check, so the relay's refusals name flags too.
func Setting(f string) string {
	if f == field.Doctor {
		return "`mcpsandbox doctor`"
	}
	return policy.FlagOf(f)
}
