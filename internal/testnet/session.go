package testnet

import (
	"context"
	"encoding/json"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/internal/testnet/netclient"
)

// Session is an MCP session, through the official Go SDK client, with a
// server command started in the client namespace: `mcpsandbox run ... --
// mcpnet serve ...` for the egress tests, or mcpnet alone (Direct).
type Session struct {
	CS     *mcp.ClientSession
	Cmd    *exec.Cmd
	Stderr *testenv.LogCapture // the command's log (mcpsandbox's, or the server's)
	exited chan struct{}
}

// Open starts cmd in the client namespace (with start, e.g. Env.Start or
// Env.StartDirect) and connects a client to its stdio. The session is
// closed and the command reaped when t ends.
func (e *Env) Open(t *testing.T, cmd *exec.Cmd, start func(*exec.Cmd) error) *Session {
	t.Helper()
	s := &Session{Cmd: cmd, Stderr: testenv.NewLogCapture(t), exited: make(chan struct{})}
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
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "testnet", Version: "1"}, nil)
	if s.CS, err = client.Connect(ctx, &mcp.IOTransport{Reader: out, Writer: in}, nil); err != nil {
		t.Fatalf("initialize through %v: %v\nstderr:\n%s", cmd.Args, err, s.Stderr)
	}
	return s
}

// Connect calls the connect tool: client against url, from inside.
func (s *Session) Connect(t *testing.T, client, url string) netclient.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*netclient.Timeout)
	defer cancel()
	res, err := s.CS.CallTool(ctx, &mcp.CallToolParams{Name: "connect", Arguments: map[string]any{"client": client, "url": url}})
	if err != nil {
		t.Fatalf("connect %s %s: %v\nstderr:\n%s", client, url, err, s.Stderr)
	}
	var r netclient.Result
	if len(res.Content) != 1 {
		t.Fatalf("connect %s %s: result %+v, want one text", client, url, res)
	}
	text, _ := res.Content[0].(*mcp.TextContent)
	if res.IsError || text == nil || json.Unmarshal([]byte(text.Text), &r) != nil {
		t.Fatalf("connect %s %s: result %+v is not a client's report", client, url, res)
	}
	return r
}

// ServerCommand is mcpnet's command line serving kit (what follows `--`).
func ServerCommand(k *netclient.Kit) []string {
	return append([]string{k.Go, "serve"}, k.Args()...)
}
