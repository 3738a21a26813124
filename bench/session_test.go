package bench

import (
	"context"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLine lets a 16 MiB result through every hop.
const maxLine = 64 << 20

// chain is one way of reaching the example server.
type chain struct {
	name string
	argv []string
}

func relayChains() []chain {
	server := bins.staticserver
	return []chain{
		{"direct", []string{server}},
		{"minrelay", []string{bins.minrelay, server}},
		{"mcpsandbox", []string{bins.mcpsandbox, "run", "--log-level", "warn", "--max-message", "32MiB", "--", server}},
	}
}

// session is a Go SDK client session over a started chain.
type session struct {
	cmd       *exec.Cmd
	cs        *mcp.ClientSession
	closeOnce sync.Once
}

func startSession(b testing.TB, argv []string) *session {
	b.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	transport := &mcp.IOTransport{Reader: out, Writer: in, MaxLineLength: maxLine}
	cs, err := client.Connect(context.Background(), transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		cmd.Process.Kill()
		b.Fatalf("%v: connect: %v", argv, err)
	}
	s := &session{cmd: cmd, cs: cs}
	b.Cleanup(s.close)
	return s
}

func (s *session) close() {
	s.closeOnce.Do(func() {
		s.cs.Close()
		s.cmd.Wait()
	})
}

func (s *session) call(b testing.TB, tool string, args map[string]any) *mcp.CallToolResult {
	res, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		b.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		b.Fatalf("%s: tool error: %v", tool, res.Content)
	}
	return res
}
