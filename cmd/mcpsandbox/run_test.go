package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/demo"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// mcpsandbox is a started `mcpsandbox ARGS...` (this test binary as the CLI)
// with a Go SDK client session on its stdio.
type mcpsandbox struct {
	cmd    *exec.Cmd
	stderr *testenv.LogCapture // written by exec's copier while the test reads it
	cs     *mcp.ClientSession
	exited chan struct{}
}

func self(t *testing.T) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// startRun starts `mcpsandbox run FLAGS -- <the example server>` (this
// test binary as both) and connects a client to it.
func startRun(t *testing.T, flags ...string) *mcpsandbox {
	t.Helper()
	argv := append(append([]string{"mcpsandbox", "run"}, flags...), "--", self(t), asExampleServer)
	m, _, err := host(t, "", nil, nil, argv...)
	if err != nil {
		t.Fatalf("connecting through mcpsandbox run: %v\nstderr:\n%s", err, m.stderr)
	}
	return m
}

// wait waits for mcpsandbox to exit and returns its status.
func (m *mcpsandbox) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-m.exited:
		return m.cmd.ProcessState.ExitCode()
	case <-time.After(30 * time.Second):
		t.Fatalf("mcpsandbox did not exit; stderr:\n%s", m.stderr)
		return -1
	}
}

func (m *mcpsandbox) call(t *testing.T, tool string, args map[string]any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := m.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v\nstderr:\n%s", tool, err, m.stderr)
	}
	if res.IsError || len(res.Content) == 0 {
		t.Fatalf("%s: error result %+v", tool, res)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// The default (confined) run relays a session; when the host leaves,
// mcpsandbox exits 0 and its log, in --log-file, says why.
func TestRunConfinedSessionEndsCleanlyWhenTheHostLeaves(t *testing.T) {
	requireConfinement(t)
	logFile := filepath.Join(t.TempDir(), "mcpsandbox.log")
	m := startRun(t, "--log-file", logFile)
	if got := m.call(t, "echo", map[string]any{"text": "through run"}); got != "through run" {
		t.Errorf("echo answered %q", got)
	}
	var in demo.ProbeReport
	if err := json.Unmarshal([]byte(m.call(t, demo.ProbeTool, nil)), &in); err != nil {
		t.Fatal(err)
	}
	if in.UID == 0 || in.Seccomp != "2" {
		t.Errorf("server under a default run: uid %d, seccomp %q; want non-root and filtered", in.UID, in.Seccomp)
	}
	m.cs.Close()
	if code := m.wait(t); code != exitOK {
		t.Errorf("exit status %d after the host left, want 0", code)
	}
	if m.stderr.String() != "" {
		t.Errorf("with --log-file, stderr got %q", m.stderr)
	}
	log, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	last := lastLine(string(log))
	if !strings.Contains(last, "host closed the connection") || !strings.Contains(last, "exit_code=0") {
		t.Errorf("last log line %q does not say the host left", last)
	}
}

// SIGTERM shuts the server down gracefully: mcpsandbox exits 0, says so in
// its last log line on stderr, and leaves no server process behind.
func TestRunSIGTERMStopsServerAndExits(t *testing.T) {
	m := startRun(t, "--unconfined")
	var in demo.ProbeReport
	if err := json.Unmarshal([]byte(m.call(t, demo.ProbeTool, nil)), &in); err != nil {
		t.Fatal(err)
	}
	if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := m.wait(t); code != exitOK {
		t.Errorf("exit status %d after SIGTERM, want 0; stderr:\n%s", code, m.stderr)
	}
	if last := lastLine(m.stderr.String()); !strings.Contains(last, "shutdown requested") {
		t.Errorf("last log line %q does not say a shutdown was requested", last)
	}
	if err := syscall.Kill(in.PID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("server process %d still exists after mcpsandbox exited (kill 0: %v)", in.PID, err)
	}
}

// A server that cannot start ends run with status 1 and a message naming it.
func TestRunServerThatCannotStartExits1(t *testing.T) {
	cmd := exec.Command(self(t), asCLI, "run", "--unconfined", "--", "/nonexistent/mcp-server")
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(""), io.Discard, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitFailure {
		t.Fatalf("run of a missing server: %v, want exit status 1; stderr:\n%s", err, &stderr)
	}
	if !strings.Contains(stderr.String(), "/nonexistent/mcp-server") {
		t.Errorf("stderr does not name the server command:\n%s", &stderr)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// A host that closes its end of mcpsandbox's stdout must not kill mcpsandbox
// with SIGPIPE: it shuts down like on host EOF, leaving no server behind.
func TestRunHostClosingStdoutEndsWithoutSIGPIPE(t *testing.T) {
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self(t), asCLI, "run", "--unconfined", "--grace", "100ms", "--",
		self(t), asExampleServer)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = outW, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	outR.Close() // the host stops reading: every write to stdout now fails
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("mcpsandbox kept running after its host went away; stderr:\n%s", &stderr)
	}
	in.Close()
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() {
		t.Fatalf("mcpsandbox died of %v instead of shutting down; stderr:\n%s", ws.Signal(), &stderr)
	}
	if log := stderr.String(); !strings.Contains(log, "server process stopped") || !strings.Contains(lastLine(log), "session ended") {
		t.Errorf("the log does not show the server stopped and the session ended:\n%s", log)
	}
}

// A server whose sandbox cannot be set up (here a --rw path that does not
// exist) is down from the start: each host request gets one error naming
// the fix, and once the host leaves mcpsandbox exits 1 saying why.
func TestRunServerThatCannotBeConfinedAnswersEachRequest(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the default confinement of this test's run needs root (or a delegated cgroup)")
	}
	missing := filepath.Join(t.TempDir(), "no-such-dir")
	runUnstartable(t, []string{"--rw", missing}, missing, "--rw "+missing, "create it or drop --rw")
}

// A grant the server's uid could not use is refused before it starts, and
// the host is told which grant, why and the fix, in the flags it used.
func TestRunGrantTheServerCannotUseIsRefusedToTheHost(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a user's grant shown to the server as its own needs mcpsandbox to run as root")
	}
	// A user's directory its owner may not write either: idmapped, the
	// server is that owner, and --rw is still of no use.
	dir := filepath.Join(t.TempDir(), "read-only-to-its-owner")
	if err := os.Mkdir(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	runUnstartable(t, []string{"--rw", dir}, dir, "--rw "+dir, "owned by 4242:4242 with mode 500", "shown to the server", "its owner may not read and write it",
		"chmod u+rwx "+dir)
}

// runUnstartable runs the example server under flags that keep it from
// starting, and checks that the host gets one -31102 answer to each
// request, saying all of want, and that the log's last line names subject.
func runUnstartable(t *testing.T, flags []string, subject string, want ...string) {
	t.Helper()
	args := append(append([]string{asCLI, "run"}, flags...), "--", self(t), asExampleServer)
	cmd := exec.Command(self(t), args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n"+
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
	lines := bufio.NewScanner(out)
	answers := map[string]int{}
	for len(answers) < 2 && lines.Scan() {
		var resp struct {
			ID    json.RawMessage
			Error struct {
				Code    int
				Message string
			}
		}
		if err := json.Unmarshal(lines.Bytes(), &resp); err != nil {
			t.Fatalf("answer %q: %v", lines.Text(), err)
		}
		answers[string(resp.ID)]++
		if resp.Error.Code != -31102 {
			t.Errorf("answer %s: want code -31102", lines.Text())
		}
		for _, w := range want {
			if !strings.Contains(resp.Error.Message, w) {
				t.Errorf("answer %s: want it to say %q", lines.Text(), w)
			}
		}
	}
	in.Close()
	for lines.Scan() {
		t.Errorf("answer after the host left: %s", lines.Text())
	}
	err = cmd.Wait()
	testenv.CheckOneAnswerEach(t, map[string]int{"1": 1, "2": 1}, answers)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitFailure {
		t.Errorf("exit: %v, want status %d; stderr:\n%s", err, exitFailure, &stderr)
	}
	if last := lastLine(stderr.String()); !strings.Contains(last, "could not be started") || !strings.Contains(last, subject) {
		t.Errorf("last log line %q does not say the server could not be started and why", last)
	}
}
