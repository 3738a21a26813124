package supervisor

import (
	"github.com/mcpsandbox/mcpsandbox/contract/scan"
	"github.com/mcpsandbox/mcpsandbox/lock"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor/mcprules"
	"github.com/mcpsandbox/mcpsandbox/supervisor/pins"
)

// pinRules chains the pinned contract's rule inside the policy's rules
// (the relay sees one Rules and holds no pin), with the policy's tool
// overrides and the scanner's view of its egress, and returns it for the
// session's status (nil: none): a lock that does not load fails the start.
func (r *relay) pinRules(opts Options) (*pins.Rule, error) {
	if opts.ID == "" {
		return nil, nil
	}
	path := opts.Policy.Lock
	if path == "" {
		path = opts.Lock
	}
	if path == "" {
		var err error
		if path, err = lock.DefaultPath(); err != nil {
			return nil, err
		}
	}
	overrides, err := policy.ParseToolOverrides(opts.Policy.ToolOverrides)
	if err != nil {
		return nil, err
	}
	p, err := pins.New(pins.Options{ID: opts.ID, Name: opts.Name, Path: path, Mode: opts.Policy.Pin, Log: r.log,
		Overrides: overrides, Scan: scan.ForPolicy(&opts.Policy), Neighbours: opts.Neighbours})
	if err != nil || p == nil {
		return nil, err
	}
	r.rules = mcprules.Chain(r.rules, p)
	return p, nil
}
