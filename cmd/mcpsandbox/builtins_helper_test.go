package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
)

// Helpers for the built-in policy tests: `mcpsandbox prepare` and `run`
// as separate processes (this test binary as the CLI), with the servers'
// state kept in a test's own directory.

// stateBase is a test's private MCPSANDBOX_STATE_DIR: as root the state
// would otherwise be /var/lib/mcpsandbox/NAME, the machine's own.
type stateBase struct {
	dir  string
	lock string   // the default lock (MCPSANDBOX_LOCK), apart from the state directories
	env  []string // the environment for prepare and run
}

func newStateBase(t *testing.T, env ...string) *stateBase {
	t.Helper()
	dir := testenv.SharedDir(t, "mcpsandbox-builtin-state-")
	// Registered after SharedDir's removal, so it runs first.
	t.Cleanup(func() { forgetStateUIDs(t, dir) })
	// A lock of its own: prepare records in it, and the user's is no test's.
	lock := filepath.Join(t.TempDir(), "lock.json")
	return &stateBase{dir: dir, lock: lock, env: append(append(os.Environ(), "MCPSANDBOX_STATE_DIR="+dir, "MCPSANDBOX_LOCK="+lock), env...)}
}

// forgetStateUIDs removes the uid registry entries of the state dirs in
// base, whose files (all the uid owns) go with the test's directories: a
// state dir made for one test gives its uid to no later server.
func forgetStateUIDs(t *testing.T, base string) {
	ents, _ := os.ReadDir(base)
	for _, e := range ents {
		info, err := e.Info()
		if err != nil {
			continue
		}
		uid := info.Sys().(*syscall.Stat_t).Uid
		if uid >= sandbox.DynamicIDFirst && uid < sandbox.DynamicIDFirst+sandbox.DynamicIDCount {
			if err := os.Remove(filepath.Join("/var/lib/mcpsandbox/ids", strconv.FormatUint(uint64(uid), 10))); err != nil && !os.IsNotExist(err) {
				t.Errorf("forgetting the test's sandbox uid %d: %v", uid, err)
			}
		}
	}
}

// stateDirs lists the state directories made under the base.
func (b *stateBase) stateDirs(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(b.dir)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range ents {
		dirs = append(dirs, filepath.Join(b.dir, e.Name()))
	}
	return dirs
}

// prepare runs `mcpsandbox prepare -- command` and returns how long it took.
func (b *stateBase) prepare(t *testing.T, command ...string) time.Duration {
	t.Helper()
	cmd := exec.Command(self(t), append([]string{asCLI, "prepare", "--"}, command...)...)
	cmd.Env = b.env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if err != nil {
		t.Fatalf("mcpsandbox prepare -- %s: %v\n%s", strings.Join(command, " "), err, out)
	}
	if !strings.Contains(string(out), "its packages are in "+b.dir+"/") {
		t.Errorf("prepare did not fill a state dir in %s:\n%s", b.dir, out)
	}
	return took
}

// started is a `mcpsandbox run` started by host, with how long its
// initialize took and, when it failed, why.
type started struct {
	*mcpsandbox
	took time.Duration // from exec until initialize was answered
	err  error         // Connect's, when it failed
}

// start starts `mcpsandbox run args...` and connects a client; s.err says
// why it could not.
func (b *stateBase) start(t *testing.T, args ...string) *started {
	t.Helper()
	m, took, err := host(t, "", b.env, nil, append([]string{"mcpsandbox", "run"}, args...)...)
	return &started{mcpsandbox: m, took: took, err: err}
}

// mustStart is start that fails the test when no session started.
func (b *stateBase) mustStart(t *testing.T, args ...string) *started {
	t.Helper()
	s := b.start(t, args...)
	if s.err != nil {
		t.Fatalf("connecting through mcpsandbox run %s: %v", strings.Join(args, " "), s.err)
	}
	return s
}

// stop ends the session and waits for mcpsandbox to exit.
func (s *started) stop() {
	if s.cs != nil {
		s.cs.Close()
	}
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
}

// call calls a tool; the result is its text, or failed with the error text.
func (s *started) call(t *testing.T, tool string, args map[string]any) (text string, failed bool) {
	t.Helper()
	if args == nil {
		args = map[string]any{} // the TypeScript servers want an object
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return err.Error(), true
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	return text, res.IsError
}

// mustCall is call that fails the test on an error result.
func (s *started) mustCall(t *testing.T, tool string, args map[string]any) string {
	t.Helper()
	text, failed := s.call(t, tool, args)
	if failed {
		t.Fatalf("%s: %s", tool, text)
	}
	return text
}

// policyLogged is the policy mcpsandbox's log says it applied.
func (s *started) policyLogged() string {
	for line := range strings.SplitSeq(s.stderr.String(), "\n") {
		if !strings.Contains(line, `msg="mcpsandbox: policy"`) {
			continue
		}
		for f := range strings.FieldsSeq(line) {
			if name, ok := strings.CutPrefix(f, "policy="); ok {
				return name
			}
		}
	}
	return ""
}

// toolNames lists the server's tools.
func (s *started) toolNames(t *testing.T) map[string]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := s.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	names := map[string]bool{}
	for _, tool := range res.Tools {
		names[tool.Name] = true
	}
	return names
}

// sandboxDir is a fresh directory the server's unprivileged uid may
// write, for the grants under test.
func sandboxDir(t *testing.T, prefix string) string {
	t.Helper()
	dir := testenv.SharedDir(t, prefix)
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}
