package launch

import (
	"path/filepath"
	"strings"
)

// stateDir is where the server's private state lives, as systemd places a
// StateDirectory=: /var/lib/mcpsandbox/NAME for root, else
// $XDG_STATE_HOME/mcpsandbox/NAME (~/.local/state by default; "" without
// a home directory); $MCPSANDBOX_STATE_DIR/NAME for either when that is an
// absolute path.
func stateDir(name string, h Host) string {
	name = stateName(name)
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

// stateName keeps a server's name a single, harmless path element; the
// uid registry's directory ("ids") is not a server's.
func stateName(name string) string {
	clean := strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' {
			return c
		}
		return '_'
	}, name)
	if clean == "" || strings.Trim(clean, ".") == "" || clean == "ids" {
		clean = "server-" + clean
	}
	return clean
}
