package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// The Go SDK client's half of the error-code tests (codes_sdk_test.go).
func TestCodesReachTheGoSDKClient(t *testing.T) {
	for _, s := range codeSessions {
		g := startGoCodes(t, s)
		for _, c := range s.cases {
			t.Run(c.Name, func(t *testing.T) {
				checkCodeOutcome(t, c, g.run(t, c.Name))
			})
		}
		g.m.cs.Close()
		want := exitOK
		if s.name == "stopped" {
			want = exitFailure // the server could not be kept up
		}
		if code := g.m.wait(t); code != want {
			t.Errorf("session %s: exit status %d after the host left, want %d", s.name, code, want)
		}
	}
}

// goCodes is a Go SDK client session through mcpsandbox to the stand-in.
type goCodes struct {
	m        *mcpsandbox
	s        codeSession
	dir      string   // the stand-in's gates
	progress chan any // progress tokens the hold tool reported
}

func startGoCodes(t *testing.T, s codeSession) *goCodes {
	t.Helper()
	g := &goCodes{s: s, dir: t.TempDir(), progress: make(chan any, 64)}
	argv := codesArgv(t, s, g.dir)
	m := &mcpsandbox{cmd: exec.Command(argv[0], argv[1:]...), stderr: testenv.NewLogCapture(t), exited: make(chan struct{})}
	m.cmd.Stderr = m.stderr
	in, err := m.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { m.cmd.Wait(); close(m.exited) }()
	t.Cleanup(func() {
		in.Close()
		select {
		case <-m.exited:
		case <-time.After(testenv.Wait(10 * time.Second)):
			m.cmd.Process.Kill()
			<-m.exited
		}
	})
	client := mcp.NewClient(&mcp.Implementation{Name: "codes-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			select {
			case g.progress <- req.Params.ProgressToken:
			default:
			}
		},
	})
	ctx, cancel := context.WithTimeout(t.Context(), testenv.Wait(30*time.Second))
	defer cancel()
	if m.cs, err = client.Connect(ctx, &mcp.IOTransport{Reader: out, Writer: in}, nil); err != nil {
		t.Fatalf("session %s: connecting: %v\nstderr:\n%s", s.name, err, m.stderr)
	}
	g.m = m
	return g
}

// call calls tool and returns its text.
func (g *goCodes) call(t *testing.T, tool string, args map[string]any) (string, error) {
	return g.callWith(t, &mcp.CallToolParams{Name: tool, Arguments: args})
}

func (g *goCodes) callWith(t *testing.T, p *mcp.CallToolParams) (string, error) {
	ctx, cancel := context.WithTimeout(t.Context(), testenv.Wait(30*time.Second))
	defer cancel()
	res, err := g.m.cs.CallTool(ctx, p)
	if err != nil {
		return "", err
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	if res.IsError {
		return "", fmt.Errorf("error result: %s", strings.Join(text, "\n"))
	}
	return strings.Join(text, "\n"), nil
}

// outcome reads the JSON-RPC error err should be.
func outcome(text string, err error) codeOutcome {
	var o codeOutcome
	var we *jsonrpc.Error
	switch {
	case err == nil:
		o.Err = fmt.Sprintf("answered %.80q", text)
	case errors.Is(err, mcp.ErrConnectionClosed):
		// The SDK keeps only the text of the error it read so.
		o.Err = "the client read it as a closed connection: " + err.Error()
	case errors.As(err, &we):
		o.Code, o.Message = we.Code, we.Message
		if err := json.Unmarshal(we.Data, &o.Data); err != nil {
			o.Err = fmt.Sprintf("data %s: %v", we.Data, err)
		}
	default:
		o.Err = "not a JSON-RPC error: " + err.Error()
	}
	return o
}

// after makes the normal call that must work once the case is over.
func (g *goCodes) after(t *testing.T) afterOutcome {
	text, err := g.call(t, "echo", map[string]any{"text": "after"})
	var we *jsonrpc.Error
	switch {
	case err == nil && text == "after":
		return afterOutcome{OK: true}
	case err == nil:
		return afterOutcome{Err: fmt.Sprintf("echo answered %.80q", text)}
	case errors.As(err, &we):
		return afterOutcome{Code: we.Code, Message: we.Message}
	}
	return afterOutcome{Err: err.Error()}
}

// run takes case name's step and the call after it.
func (g *goCodes) run(t *testing.T, name string) codeOutcome {
	var o codeOutcome
	switch name {
	case "crashed", "stopped":
		o = outcome(g.call(t, "crash", map[string]any{"code": 3}))
	case "too-large-response":
		o = outcome(g.call(t, "big", map[string]any{"bytes": 2 * g.s.maxMessage}))
	case "too-large-request":
		o = outcome(g.call(t, "echo", map[string]any{"text": strings.Repeat("x", 2*g.s.maxMessage)}))
	case "invalid-utf8":
		o = outcome(g.call(t, "invalid", map[string]any{"how": "utf8"}))
	case "invalid-deep":
		o = outcome(g.call(t, "invalid", map[string]any{"how": "deep"}))
	case "denied":
		o = outcome(g.call(t, "forbidden", nil))
	case "timeout":
		o = outcome(g.call(t, "hold", map[string]any{"gate": "timeout"}))
	case "rate-limited":
		if _, err := g.call(t, "limited", nil); err != nil {
			return codeOutcome{Err: "the first call, within the limit: " + err.Error()}
		}
		o = outcome(g.call(t, "limited", nil))
	case "queue-full":
		o = g.queueFull(t)
	case "too-many-calls":
		o = g.tooManyCalls(t)
	default:
		t.Fatalf("no step for case %s", name)
	}
	if o.Err == "" {
		o.After = g.after(t)
	}
	o.Case = name
	return o
}

type callResult struct {
	text string
	err  error
}

// queueFull crashes the server with its next process held at the restart
// gate, and sends three calls of 2/5 --max-message each while it waits:
// two fit the queue, the third is refused. Released, the two are answered.
func (g *goCodes) queueFull(t *testing.T) codeOutcome {
	if o := outcome(g.call(t, "crash", map[string]any{"code": 3, "holdRestart": true})); o.Err != "" {
		return codeOutcome{Err: "the crash that starts the restart: " + o.Err}
	}
	text := strings.Repeat("q", g.s.maxMessage*2/5)
	results := make(chan callResult, 3)
	for range 3 {
		go func() {
			got, err := g.call(t, "echo", map[string]any{"text": text})
			results <- callResult{got, err}
		}()
	}
	first := <-results
	o := outcome(first.text, first.err)
	if err := releaseGate(filepath.Join(g.dir, restartGate), 1); err != nil {
		return codeOutcome{Err: err.Error()}
	}
	for range 2 {
		if r := <-results; r.err != nil || r.text != text {
			return codeOutcome{Err: fmt.Sprintf("a call held for the restart got %.80q, %v", r.text, r.err)}
		}
	}
	return o
}

// tooManyCalls holds --max-concurrent-calls calls in the server, each
// reporting progress once it holds, makes one more, then lets them go.
func (g *goCodes) tooManyCalls(t *testing.T) codeOutcome {
	n := g.s.maxCalls
	results := make(chan callResult, n)
	for i := range n {
		go func() {
			p := &mcp.CallToolParams{Name: "hold", Arguments: map[string]any{"gate": "calls"}}
			p.SetProgressToken(fmt.Sprintf("hold-%d", i))
			got, err := g.callWith(t, p)
			results <- callResult{got, err}
		}()
	}
	for range n {
		select {
		case <-g.progress:
		case r := <-results:
			return codeOutcome{Err: fmt.Sprintf("a held call ended before the others held: %.80q, %v", r.text, r.err)}
		case <-time.After(testenv.Wait(30 * time.Second)):
			return codeOutcome{Err: "the held calls did not all report progress"}
		}
	}
	o := outcome(g.call(t, "echo", map[string]any{"text": "one too many"}))
	if err := releaseGate(filepath.Join(g.dir, "calls"), n); err != nil {
		return codeOutcome{Err: err.Error()}
	}
	for range n {
		if r := <-results; r.err != nil || r.text != "released" {
			return codeOutcome{Err: fmt.Sprintf("a held call got %.80q, %v", r.text, r.err)}
		}
	}
	return o
}

// releaseGate writes n bytes to the stand-in's FIFO gate at path, waiting
// (bounded) for the process that reads it to open it.
func releaseGate(path string, n int) error {
	done := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err == nil {
			_, err = f.Write(make([]byte, n))
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(testenv.Wait(30 * time.Second)):
		return fmt.Errorf("nothing opened the gate %s to read", path)
	}
}
