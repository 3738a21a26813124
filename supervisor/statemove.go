package supervisor

import (
	"os"

	"github.com/mcpsandbox/mcpsandbox/sandbox"
)

// moveFormerState moves the server's former state directory to StateDir,
// or says why it stays, before the server first starts with its own: once
// that exists there is nothing more to do or say.
func (o Options) moveFormerState() {
	f := o.FormerState
	if f.Dir == "" || o.StateDir == "" {
		return
	}
	if _, err := os.Lstat(o.StateDir); err == nil {
		return
	}
	if _, err := os.Lstat(f.Dir); err != nil {
		return
	}
	if !f.Move {
		o.Log.Warn("mcpsandbox: the state directory servers of this name shared is left where it is; this server starts with a state directory of its own",
			"server", o.Name, "left", f.Dir, "why", f.Why, "state", o.StateDir)
		return
	}
	if err := sandbox.MoveStateDir(f.Dir, o.StateDir); err != nil {
		o.Log.Warn("mcpsandbox: the server's former state directory could not be moved; it starts with a new one",
			"server", o.Name, "left", f.Dir, "err", err, "state", o.StateDir)
		return
	}
	o.Log.Info("mcpsandbox: the server's state directory was moved to its own name, its owner kept",
		"server", o.Name, "from", f.Dir, "to", o.StateDir, "why", f.Why)
}
