package lock

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// DefaultPath is the user's lock: /etc/mcpsandbox/lock.json for root, else
// $XDG_CONFIG_HOME/mcpsandbox/lock.json, else ~/.config/mcpsandbox/lock.json;
// $MCPSANDBOX_LOCK for either when that is an absolute path (as
// $MCPSANDBOX_STATE_DIR moves the state directories).
func DefaultPath() (string, error) {
	if path := os.Getenv("MCPSANDBOX_LOCK"); filepath.IsAbs(path) {
		return path, nil
	}
	return defaultPathFor(os.Geteuid())
}

func defaultPathFor(euid int) (string, error) {
	if euid == 0 {
		return "/etc/mcpsandbox/lock.json", nil
	}
	if dir := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "mcpsandbox", "lock.json"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no lock file: %w: set $HOME or $XDG_CONFIG_HOME, or name one with --lock FILE", err)
	}
	return filepath.Join(home, ".config", "mcpsandbox", "lock.json"), nil
}

// BesideConfig is the lock of a daemon config, beside it:
// /etc/mcpsandbox/daemon.json → /etc/mcpsandbox/daemon.lock.json.
func BesideConfig(config string) string {
	return strings.TrimSuffix(config, filepath.Ext(config)) + ".lock.json"
}
