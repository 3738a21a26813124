package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// A prepare step that fails: exit 1 with the tool's own output and the
// failure named, and nothing it started left running. The uvx here is a
// stand-in (uv cannot be installed on this machine) that starts a child
// and fails, as a fetch that cannot reach its index would.
func TestPrepareThatFailsLeavesNothingBehind(t *testing.T) {
	requireConfinement(t)
	tools := testenv.SharedDir(t, "mcpsandbox-prepare-")
	uvx := filepath.Join(tools, "bin", "uvx")
	if err := os.MkdirAll(filepath.Dir(uvx), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nif [ \"$1\" = linger ]; then while :; do sleep 1; done; fi\n\"$0\" linger &\necho 'error: the package index is unreachable' >&2\nexit 1\n"
	if err := os.WriteFile(uvx, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	b := newStateBase(t, "PATH="+filepath.Dir(uvx)+":"+os.Getenv("PATH"))
	cmd := exec.Command(self(t), asCLI, "prepare", "--", "uvx", "mcp-server-time")
	cmd.Env = b.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != exitFailure {
		t.Errorf("prepare: %v, exit status %d, want %d", err, code, exitFailure)
	}
	for _, want := range []string{"policy=time", "error: the package index is unreachable", "fetching the packages failed (exited with status 1)"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("prepare's output lacks %q:\n%s", want, &stderr)
		}
	}
	if left := processesNaming(uvx); len(left) > 0 {
		t.Errorf("processes the failed prepare started are still running: %v", left)
	}
}

// A launch line that fetches nothing at start has nothing to prepare: a
// usage error naming which lines do.
func TestPrepareOfALineThatFetchesNothing(t *testing.T) {
	var stderr bytes.Buffer
	code := cli([]string{"prepare", "--", "python3", "server.py"}, stdio{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &stderr})
	if code != exitUsage || !strings.Contains(stderr.String(), "nothing to prepare: only npx and uvx launch lines fetch packages") {
		t.Errorf("prepare -- python3 server.py: exit %d, %q", code, &stderr)
	}
}

// processesNaming lists the pids whose command line holds arg.
func processesNaming(arg string) []string {
	var pids []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(arg)) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}
