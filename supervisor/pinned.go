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
func (r *relay) pinRules(opts Options, overrides map[string]policy.ToolOverride) (*pins.Rule, error) {
	if opts.ID == "" {
		return nil, nil
	}
	path, err := lockPath(opts)
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

// lockPath is the lock file of opts's server: the policy's, the daemon's,
// or the user's.
func lockPath(opts Options) (string, error) {
	if opts.Policy.Lock != "" {
		return opts.Policy.Lock, nil
	}
	if opts.Lock != "" {
		return opts.Lock, nil
	}
	return lock.DefaultPath()
}
