package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Host is what launch reads of the machine: the process's own view by
// FromProcess, a made-up one in tests.
type Host struct {
	Home    string
	WorkDir string
	Root    bool // mcpsandbox runs as root
	// LookupEnv reads the environment the server is started from (the
	// one mcpsandbox runs in, for run): os.LookupEnv's answer.
	LookupEnv func(string) (string, bool)
	// Which asks a version manager where a shim leads (e.g. pyenv which
	// python3), run in WorkDir since managers pick versions by directory.
	Which func(manager string, args ...string) (string, error)
}

// FromProcess is the host as this process sees it.
func FromProcess() Host {
	home, _ := os.UserHomeDir()
	wd, _ := os.Getwd()
	return Host{Home: home, WorkDir: wd, Root: os.Geteuid() == 0, LookupEnv: os.LookupEnv, Which: runWhich(wd)}
}

// InDir is h for a server started in dir (the daemon's entries each
// name theirs): its WorkDir, and a version manager asked there.
func (h Host) InDir(dir string) Host {
	h.WorkDir = dir
	if h.Which != nil {
		h.Which = runWhich(dir)
	}
	return h
}

// whichTimeout bounds a version manager's answer: a shim resolution is a
// file lookup, and a start must not hang on a broken manager.
const whichTimeout = 5 * time.Second

func runWhich(dir string) func(string, ...string) (string, error) {
	return func(manager string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), whichTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, manager, args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			// The manager's own words say what is missing.
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				if msg, _, _ := strings.Cut(strings.TrimSpace(string(exit.Stderr)), "\n"); msg != "" {
					return "", fmt.Errorf("%w: %s", err, msg)
				}
			}
			return "", err
		}
		line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		return line, nil
	}
}

func (h Host) env(name string) string {
	if h.LookupEnv == nil {
		return ""
	}
	v, _ := h.LookupEnv(name)
	return v
}
