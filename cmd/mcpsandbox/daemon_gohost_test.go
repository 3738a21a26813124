package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// A Go SDK host of a daemon's server: the official client on
// mcp.CommandTransport of `mcpsandbox connect NAME`, as a Go host starts a
// server, with every message it sends and gets counted by id.

// goDaemonHost is one host session through connect.
type goDaemonHost struct {
	name  string
	cs    *mcp.ClientSession
	cmd   *exec.Cmd // the connect process
	wire  *wireTally
	errs  *testenv.LogCapture
	close sync.Once
}

// connectGo starts `mcpsandbox connect name` and initializes a session on
// it: version "" is the SDK's default (server/discover first, then
// initialize if the server does not know it), else initialize with it.
func (d *e2eDaemon) connectGo(t *testing.T, name, version string) (*goDaemonHost, error) {
	t.Helper()
	return d.connectGoWith(t, name, version, nil)
}

// connectGoWith is connectGo with a client of options (nil: none), e.g. an
// ElicitationHandler, which makes the client declare elicitation.
func (d *e2eDaemon) connectGoWith(t *testing.T, name, version string, options *mcp.ClientOptions) (*goDaemonHost, error) {
	t.Helper()
	argv := d.connectArgv(name)
	h := &goDaemonHost{name: name, cmd: exec.Command(argv[0], argv[1:]...), wire: newWireTally(), errs: testenv.NewLogCapture(t)}
	h.cmd.Env, h.cmd.Stderr = d.env, h.errs
	var so *mcp.ClientSessionOptions
	if version != "" {
		so = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	ctx, cancel := context.WithTimeout(context.Background(), e2eWait)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "daemon-e2e", Version: "1"}, options)
	cs, err := client.Connect(ctx, &tallyTransport{inner: &mcp.CommandTransport{Command: h.cmd, TerminateDuration: 10 * time.Second}, tally: h.wire}, so)
	if err != nil {
		if h.cmd.Process != nil {
			h.cmd.Process.Kill()
			h.cmd.Wait()
		}
		return nil, fmt.Errorf("initialize through `mcpsandbox connect %s`: %w", name, err)
	}
	h.cs = cs
	t.Cleanup(h.Close)
	return h, nil
}

// mustConnectGo is connectGo that fails the test.
func (d *e2eDaemon) mustConnectGo(t *testing.T, name, version string) *goDaemonHost {
	t.Helper()
	h, err := d.connectGo(t, name, version)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// pid is the connect process's, which the daemon sees as the client.
func (h *goDaemonHost) pid() int { return h.cmd.Process.Pid }

func (h *goDaemonHost) protocol() string { return h.cs.InitializeResult().ProtocolVersion }

// Close ends the session (stdin closed) and waits for connect to exit.
func (h *goDaemonHost) Close() { h.close.Do(func() { h.cs.Close() }) }

func (h *goDaemonHost) tools() ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), e2eWait)
	defer cancel()
	res, err := h.cs.ListTools(ctx, nil)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names, nil
}

// call calls a tool: its text, whether it is an error result, or the
// JSON-RPC error it got.
func (h *goDaemonHost) call(tool string, args map[string]any) (string, bool, error) {
	if args == nil {
		args = map[string]any{} // the TypeScript servers want an object
	}
	ctx, cancel := context.WithTimeout(context.Background(), e2eWait)
	defer cancel()
	res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", false, err
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	return text.String(), res.IsError, nil
}

// wireTally counts, by id, the requests a host sent and the responses it
// got, as they cross its transport: below the SDK, which would drop a
// second answer to one id unseen.
type wireTally struct {
	mu        sync.Mutex
	sent      map[string]string // id → method
	responses map[string]int    // id → answers
}

func newWireTally() *wireTally {
	return &wireTally{sent: map[string]string{}, responses: map[string]int{}}
}

func idKey(id jsonrpc.ID) string { return fmt.Sprintf("%#v", id.Raw()) }

// check says what is wrong: a request answered never or twice, an answer
// to no request.
func (w *wireTally) check() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var bad []string
	for id, method := range w.sent {
		if n := w.responses[id]; n != 1 {
			bad = append(bad, fmt.Sprintf("%s (id %s) answered %d times", method, id, n))
		}
	}
	for id, n := range w.responses {
		if _, ok := w.sent[id]; !ok {
			bad = append(bad, fmt.Sprintf("%d answers to id %s, which was never sent", n, id))
		}
	}
	return bad
}

func (w *wireTally) requests() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.sent)
}

type tallyTransport struct {
	inner mcp.Transport
	tally *wireTally
}

func (t *tallyTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &tallyConn{Connection: c, tally: t.tally}, nil
}

type tallyConn struct {
	mcp.Connection
	tally *wireTally
}

func (c *tallyConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if r, ok := m.(*jsonrpc.Response); ok && err == nil {
		c.tally.mu.Lock()
		c.tally.responses[idKey(r.ID)]++
		c.tally.mu.Unlock()
	}
	return m, err
}

func (c *tallyConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if r, ok := m.(*jsonrpc.Request); ok && r.ID.IsValid() {
		c.tally.mu.Lock()
		c.tally.sent[idKey(r.ID)] = r.Method
		c.tally.mu.Unlock()
	}
	return c.Connection.Write(ctx, m)
}
