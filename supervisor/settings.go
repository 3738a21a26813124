package supervisor

import (
	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
)

// explain is err's text with the settings it names rendered the user's way.
func (r *relay) explain(err error) string { return field.Message(err, r.setting) }

// exitReason says how a server process ended, a setup failure's settings
// rendered the user's way.
func (r *relay) exitReason(ex sandbox.Exit) string {
	return field.Rewrite(ex.String(), ex.SetupErr, r.setting)
}
