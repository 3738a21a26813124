package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/daemon"
)

// wrap --daemon, without --daemon-config, adds the servers to the running
// daemon's own config and has it read the file again: the host's
// `connect NAME` is served at once, with no `mcpsandbox reload`; --undo
// takes the server out of the daemon's file and out of the daemon. (The
// server is this test binary, which is also the mcpsandbox wrap finds:
// --command names the PATH's mcpsandbox, so that the server is not taken
// for mcpsandbox itself.)
func TestWrapDaemonReloadsTheRunningDaemon(t *testing.T) {
	requireConfinement(t)
	home, env := wrapDaemonHome(t)
	config := filepath.Join(home, ".config", "mcpsandbox", "daemon.json")
	writeTree(t, home, map[string]string{
		".config/mcpsandbox/daemon.json": fmt.Sprintf(`{"mcpServers": {"notes": {"command": %q, "args": [%q]}}}`, self(t), asExampleServer),
		".cursor/mcp.json":               fmt.Sprintf(`{"mcpServers": {"tasks": {"command": %q, "args": [%q]}}}`, self(t), asExampleServer),
	})
	const wrapLine = `mcpsandbox wrap --daemon --no-prepare --command "$(command -v mcpsandbox)" ~/.cursor/mcp.json`
	d := startCLIDaemon(t, home, env, "mcpsandbox daemon --config "+config)
	pid := d.cmd.Process.Pid

	out := shell(t, home, env, wrapLine)
	wantIn(t, "wrap --daemon", out, "  tasks: wrapped: ", "mcpsandbox connect tasks",
		"  added to the daemon's "+config+"\n",
		fmt.Sprintf("  the daemon (pid %d) read it again: unchanged: notes; added: tasks (0 instances stopped)\n", pid))
	host, _ := mustHost(t, home, env, "sh", "-c", "mcpsandbox connect tasks")
	if got := host.call(t, "echo", map[string]any{"text": "at once"}); got != "at once" {
		t.Errorf("tasks, right after wrap --daemon, answered %q", got)
	}
	host.cs.Close()

	out = shell(t, home, env, "mcpsandbox wrap --undo ~/.cursor/mcp.json")
	wantIn(t, "wrap --undo", out, fmt.Sprintf("  the daemon (pid %d) read it again: unchanged: notes; removed: tasks", pid))
	if status := shell(t, home, env, "mcpsandbox status"); strings.Contains(status, "tasks") {
		t.Errorf("after wrap --undo the daemon still keeps tasks:\n%s", status)
	}

	// A daemon that refuses to read the file again (here it was broken
	// after wrap wrote it) is named, with its reason.
	good := readFile(t, config)
	writeTree(t, home, map[string]string{".config/mcpsandbox/daemon.json": `{"mcpServers": {"notes": {"comand": "x"}}}`})
	for _, kv := range env {
		if dir, ok := strings.CutPrefix(kv, "XDG_RUNTIME_DIR="); ok {
			t.Setenv("XDG_RUNTIME_DIR", dir) // where this process looks for the daemon, as wrap did
		}
	}
	var refused bytes.Buffer
	reloadDaemonsOf(config, stdio{Out: &refused, Err: &refused})
	wantIn(t, "a refused reload", refused.String(), fmt.Sprintf("  the daemon (pid %d) did not read it again: ", pid), config+":1:")
	writeTree(t, home, map[string]string{".config/mcpsandbox/daemon.json": string(good)})
	d.stop(t)

	// With no daemon running, wrap says how to start one on the file.
	out = shell(t, home, env, wrapLine)
	wantIn(t, "wrap --daemon, no daemon", out, "  no running daemon reads it: start one with `mcpsandbox daemon --config "+config+"`")
}

// wrapDaemonHome is daemonHome for `wrap --daemon` without
// --daemon-config, which adds servers to the config of the daemon that
// answers: a daemon of this machine's own must not be the one (root's
// socket directory, /run/mcpsandbox, is the same for every root).
func wrapDaemonHome(t *testing.T) (string, []string) {
	t.Helper()
	home, env := daemonHome(t)
	if os.Geteuid() == 0 {
		sock := filepath.Join(daemon.SystemSocketDir, daemon.SocketName)
		if c, _, err := daemon.Dial(sock, daemon.Hello{Control: daemon.ControlStatus}); err == nil {
			if c != nil {
				c.Close()
			}
			t.Skipf("a daemon of this machine's answers on %s: wrap --daemon would add servers to its config", sock)
		}
	}
	return home, env
}
