package supervisor

import (
	"encoding/json"

	"github.com/mcpsandbox/mcpsandbox/notify"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/secrets"
	"github.com/mcpsandbox/mcpsandbox/supervisor/approval"
	"github.com/mcpsandbox/mcpsandbox/supervisor/audit"
	"github.com/mcpsandbox/mcpsandbox/supervisor/mcprules"
	"github.com/mcpsandbox/mcpsandbox/supervisor/pins"
)

// summaryMax bounds the arguments a person is shown when asked.
const summaryMax = 1 << 10

// approvalRules chains the approval tiers' rule inside the others (a call
// the policy or the pins refuse is never put to a person), as pinRules
// does for pins: the relay only ever sees Verdicts. The annotations the
// lock pins come from the pin rule (nil: none pinned), which has read it.
func (r *relay) approvalRules(opts Options, pinned *pins.Rule, overrides map[string]policy.ToolOverride, scanner *secrets.Scanner) error {
	p := opts.Policy
	if len(p.ApproveTools) == 0 && len(p.ApproveAnnotated) == 0 {
		return nil
	}
	path, err := lockPath(opts)
	if err != nil {
		return err
	}
	server := opts.ID
	if server == "" {
		server = opts.Name
	}
	var known []json.RawMessage
	if pinned != nil && len(p.ApproveAnnotated) > 0 {
		known = pinned.PinnedTools()
	}
	rule := approval.New(approval.Options{Policy: p, Server: server, Name: opts.Name, Lock: path,
		Known: known, Overrides: overrides, Notify: r.desktopNotifier(),
		Mask: func(args []byte) string { return audit.Summary(args, p.AuditMask, scanner, summaryMax) }})
	r.rules = mcprules.Chain(r.rules, rule)
	return nil
}

// desktopNotifier tells the desktop that a call waits for `mcpsandbox
// approve`, without ever holding the call: one notification at a time, on
// a goroutine of its own; one asked meanwhile is not shown (a host cannot
// pile up goroutines by asking with ever new arguments).
func (r *relay) desktopNotifier() func(summary, body string) {
	desk := &notify.Desktop{Log: r.log}
	busy := make(chan struct{}, 1)
	return func(summary, body string) {
		select {
		case busy <- struct{}{}:
			go func() {
				defer func() { <-busy }()
				desk.Notify(summary, body)
			}()
		default:
		}
	}
}
