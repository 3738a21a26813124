package testnet

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/internal/testnet/netclient"
)

// Session is an MCP session, through the official Go SDK client, with a
// server command started in the client namespace: `mcpsandbox run ... --
// mcpnet serve ...` for the egress tests, or mcpnet alone (Direct).
type Session struct {
	CS     *mcp.ClientSession
	Cmd    *exec.Cmd
	Stderr *Log // the command's log (mcpsandbox's, or the server's)
	exited chan struct{}
}

// Open starts cmd in the client namespace (with start, e.g. Env.Start or
// Env.StartDirect) and connects a client to its stdio. The session is
// closed and the command reaped when t ends.
func (e *Env) Open(t testing.TB, cmd *exec.Cmd, start func(*exec.Cmd) error) *Session {
	t.Helper()
	s := &Session{Cmd: cmd, Stderr: newLog(t), exited: make(chan struct{})}
	cmd.Stderr = s.Stderr
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL // nothing outlives a killed test
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := start(cmd); err != nil {
		t.Fatalf("starting %v: %v", cmd.Args, err)
	}
	go func() { cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() {
		in.Close()
		if s.CS != nil {
			s.CS.Close()
		}
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-s.exited
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "testnet", Version: "1"}, nil)
	if s.CS, err = client.Connect(ctx, &mcp.IOTransport{Reader: out, Writer: in}, nil); err != nil {
		t.Fatalf("initialize through %v: %v\nstderr:\n%s", cmd.Args, err, s.Stderr)
	}
	return s
}

// Connect calls the connect tool: client against url, from inside.
func (s *Session) Connect(t testing.TB, client, url string) netclient.Result {
	t.Helper()
	var r netclient.Result
	s.call(t, "connect", map[string]any{"client": client, "url": url}, &r)
	return r
}

// call calls tool and decodes its one JSON text into out.
func (s *Session) call(t testing.TB, tool string, args, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := s.CS.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %+v: %v\nstderr:\n%s", tool, args, err, s.Stderr)
	}
	var text *mcp.TextContent
	if len(res.Content) == 1 {
		text, _ = res.Content[0].(*mcp.TextContent)
	}
	if res.IsError || text == nil || json.Unmarshal([]byte(text.Text), out) != nil {
		t.Fatalf("%s %+v: result %+v is not the tool's report", tool, args, res)
	}
}

// ServerCommand is mcpnet's command line serving kit (what follows `--`).
func ServerCommand(k *netclient.Kit) []string {
	return append([]string{k.Go, "serve"}, k.Args()...)
}

// Log keeps a command's standard error and mirrors each write to the test
// log while the test runs (a finished test's t.Log panics).
type Log struct {
	mu    sync.Mutex
	buf   strings.Builder
	t     testing.TB
	ended bool
}

func newLog(t testing.TB) *Log {
	l := &Log{t: t}
	t.Cleanup(func() {
		l.mu.Lock()
		l.ended = true
		l.mu.Unlock()
	})
	return l
}

func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if !l.ended {
		l.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

// String is everything written so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Contains reports whether s was written.
func (l *Log) Contains(s string) bool { return strings.Contains(l.String(), s) }
