package launch

import (
	"path/filepath"
)

// stateDir is where the server's private state lives, as systemd places a
// StateDirectory=: /var/lib/mcpsandbox/NAME for root, else
// $XDG_STATE_HOME/mcpsandbox/NAME (~/.local/state by default; "" without
// a home directory); $MCPSANDBOX_STATE_DIR/NAME for either when that is an
// absolute path. NAME is a single path element (identity's state name).
func stateDir(name string, h Host) string {
	if base := h.env("MCPSANDBOX_STATE_DIR"); filepath.IsAbs(base) {
		return filepath.Join(base, name)
	}
	if h.Root {
		return filepath.Join("/var/lib/mcpsandbox", name)
	}
	base := h.env("XDG_STATE_HOME")
	if !filepath.IsAbs(base) {
		if !filepath.IsAbs(h.Home) {
			return "" // nowhere of the user's: ${STATE} is then unknown
		}
		base = filepath.Join(h.Home, ".local", "state")
	}
	return filepath.Join(base, "mcpsandbox", name)
}
