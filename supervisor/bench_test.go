package supervisor_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// Relay overhead, in one run: the same Go SDK client calls the example
// server through supervisor.Run and through a minimal line-copying relay
// (the floor for any relay). Both run in this process; the host side uses
// real pipes. The README's figures come from bench/, which runs the binary.
//
//	go test ./supervisor -run '^$' -bench Relay -benchtime 2000x

func BenchmarkRelayEcho1KiB(b *testing.B) {
	text := strings.Repeat("a", 1024)
	benchBoth(b, func(b *testing.B, cs *mcp.ClientSession) {
		for b.Loop() {
			if got := mustCallTool(b, cs, "echo", map[string]any{"text": text}); len(got) != len(text) {
				b.Fatal("short echo")
			}
		}
	})
}

func BenchmarkRelayResult8MiB(b *testing.B) {
	benchBoth(b, func(b *testing.B, cs *mcp.ClientSession) {
		b.SetBytes(8 << 20)
		for b.Loop() {
			if got := mustCallTool(b, cs, "big", map[string]any{"bytes": 8 << 20}); len(got) != 8<<20 {
				b.Fatal("short result")
			}
		}
	})
}

func benchBoth(b *testing.B, body func(*testing.B, *mcp.ClientSession)) {
	b.Run("minimal", func(b *testing.B) {
		cs := connectPipes(b, startMinimalRelay(b))
		defer cs.Close()
		body(b, cs)
	})
	b.Run("mcpsandbox", func(b *testing.B) {
		cs := connectPipes(b, startSupervisorPipes(b))
		defer cs.Close()
		body(b, cs)
	})
}

type pipes struct {
	toRelay   *os.File // host writes
	fromRelay *os.File // host reads
}

func hostPipes(b *testing.B) (relayIn, relayOut *os.File, p pipes) {
	inR, inW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	b.Cleanup(func() { inW.Close(); outR.Close() })
	return inR, outW, pipes{toRelay: inW, fromRelay: outR}
}

func connectPipes(b *testing.B, p pipes) *mcp.ClientSession {
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: p.fromRelay, Writer: p.toRelay, MaxLineLength: 64 << 20}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	return cs
}

func startSupervisorPipes(b *testing.B) pipes {
	in, out, p := hostPipes(b)
	pol := testPolicy(exampleCommand(b))
	pol.MaxMessage = 64 << 20
	done := make(chan struct{})
	go func() {
		supervisor.Run(context.Background(), supervisor.Options{Policy: pol, HostIn: in, HostOut: out, Log: slog.New(slog.DiscardHandler)})
		out.Close()
		close(done)
	}()
	b.Cleanup(func() { p.toRelay.Close(); <-done })
	return p
}

// startMinimalRelay copies lines both ways and nothing else.
func startMinimalRelay(b *testing.B) pipes {
	in, out, p := hostPipes(b)
	cmd := exec.Command(exampleCommand(b)[0], exampleCommand(b)[1:]...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	copyLines := func(dst io.Writer, src io.Reader) {
		r := bufio.NewReaderSize(src, 64<<10)
		var line []byte
		for {
			chunk, err := r.ReadSlice('\n')
			line = append(line[:0], chunk...)
			for err == bufio.ErrBufferFull {
				chunk, err = r.ReadSlice('\n')
				line = append(line, chunk...)
			}
			if len(line) > 0 {
				dst.Write(line)
			}
			if err != nil {
				return
			}
		}
	}
	go func() { copyLines(stdin, in); stdin.Close() }()
	go copyLines(out, stdout)
	b.Cleanup(func() { p.toRelay.Close(); cmd.Wait() })
	return p
}
