package bench

import (
	"context"
	"io"
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
	chains := []chain{
		{"direct", []string{server}},
		{"minrelay", []string{bins.minrelay, server}},
	}
	if bins.baseline != "" {
		chains = append(chains, chain{"baseline", []string{bins.baseline, "run", "--log-level", "warn", "--max-message", "32MiB", "--", server}})
	}
	// Last: the benchmarks read its RSS.
	return append(chains, chain{"mcpsandbox", []string{bins.mcpsandbox, "run", "--log-level", "warn", "--max-message", "32MiB", "--", server}})
}

// session is a Go SDK client session over a started chain.
type session struct {
	cmd       *exec.Cmd
	cs        *mcp.ClientSession
	closeOnce sync.Once
	waitErr   error
}

func startSession(b testing.TB, argv []string) *session {
	b.Helper()
	return startSessionLogging(b, argv, os.Stderr)
}

// startSessionLogging is startSession with the chain's stderr (its log)
// going to stderr.
func startSessionLogging(b testing.TB, argv []string, stderr io.Writer) *session {
	b.Helper()
	return startSessionVia(b, argv, stderr, (*exec.Cmd).Start)
}

// startSessionVia is startSessionLogging with the chain started by start
// (in another network namespace, say).
func startSessionVia(b testing.TB, argv []string, stderr io.Writer, start func(*exec.Cmd) error) *session {
	b.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := start(cmd); err != nil {
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
	b.Cleanup(func() { s.close() })
	return s
}

// close ends the session and returns how the chain exited.
func (s *session) close() error {
	s.closeOnce.Do(func() {
		s.cs.Close()
		s.waitErr = s.cmd.Wait()
	})
	return s.waitErr
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
