package supervisor_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// waitLimit bounds every wait in these tests; nothing waits by sleeping.
var waitLimit = testenv.Wait(20 * time.Second)

// exampleCommand runs the bundled example server (this test binary in the
// example-server role).
func exampleCommand(t testing.TB) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, roleExampleServer}
}

// testPolicy is the default policy (confined, as users run it) with quick
// restarts and no heartbeat unless a test asks for one.
func testPolicy(cmd []string) policy.Policy {
	p := policy.Default()
	p.Command = cmd
	p.PingInterval = 0
	p.RestartBackoff = policy.Backoff{Min: 5 * time.Millisecond, Max: 50 * time.Millisecond}
	p.Grace = 300 * time.Millisecond // some servers ignore stdin EOF (see shutdown tests)
	return p
}

// requireConfinement skips a confined test under -short when this user
// cannot confine here (see testenv.RequireConfinement).
func requireConfinement(t testing.TB) {
	t.Helper()
	testenv.RequireConfinement(t, func() error { return sandbox.Doctor().Problem(field.Plain) })
}

// relay is supervisor.Run in-process, wired to the test as its host.
type relay struct {
	t       testing.TB
	toRelay *io.PipeWriter // the host's writes
	fromRly *io.PipeReader // the host's reads
	events  chan supervisor.Event
	outcome chan supervisor.Outcome
	started chan *supervisor.Session // the session, once started
	logs    *syncBuffer
	cancel  context.CancelFunc
}

// syncBuffer is the supervisor's log, waited on by the tests.
type syncBuffer struct{ testenv.LogBuffer }

// waitFor waits until the log contains substr.
func (s *syncBuffer) waitFor(t testing.TB, substr string) {
	t.Helper()
	s.waitForCount(t, substr, 1)
}

// waitForCount waits until the log contains substr n times.
func (s *syncBuffer) waitForCount(t testing.TB, substr string, n int) {
	t.Helper()
	if !s.WaitUntil(waitLimit, func(log string) bool { return strings.Count(log, substr) >= n }) {
		t.Fatalf("log never said %q", substr)
	}
}

// startRelay supervises pol's server for a host the test plays; with
// sets the options the harness leaves alone.
func startRelay(t testing.TB, pol policy.Policy, with ...func(*supervisor.Options)) *relay {
	t.Helper()
	if !pol.Unconfined {
		requireConfinement(t)
	}
	hostInR, hostInW := io.Pipe()
	hostOutR, hostOutW := io.Pipe()
	r := &relay{
		t:       t,
		toRelay: hostInW,
		fromRly: hostOutR,
		events:  make(chan supervisor.Event, 256),
		outcome: make(chan supervisor.Outcome, 1),
		started: make(chan *supervisor.Session, 1),
		logs:    &syncBuffer{},
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	log := slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	go func() {
		opts := supervisor.Options{
			Name: "test", Policy: pol, HostIn: hostInR, HostOut: hostOutW, Log: log, LookupEnv: os.LookupEnv,
			Events: func(e supervisor.Event) { r.events <- e },
		}
		for _, f := range with {
			f(&opts)
		}
		s, err := supervisor.Start(ctx, opts)
		var out supervisor.Outcome
		if err == nil {
			r.started <- s
			out, err = s.Wait()
		}
		if err != nil {
			out.Reason = "Run error: " + err.Error()
		}
		hostOutW.Close()
		hostInR.Close()
		r.outcome <- out
	}()
	t.Cleanup(func() {
		cancel()
		hostInW.Close()
		hostOutR.Close()
		if t.Failed() {
			t.Logf("supervisor log:\n%s", r.logs.String())
		}
	})
	return r
}

// session is the supervisor's session (Status, Restart).
func (r *relay) session() *supervisor.Session {
	s := <-r.started
	r.started <- s
	return s
}

// waitEvent waits for the next event of the given kind.
func (r *relay) waitEvent(kind supervisor.EventKind) supervisor.Event {
	r.t.Helper()
	deadline := time.After(waitLimit)
	for {
		select {
		case e := <-r.events:
			if e.Kind == kind {
				return e
			}
		case <-deadline:
			r.t.Fatalf("no %s event within %s", kind, waitLimit)
		}
	}
}

// end closes the host's side and returns how supervision ended.
func (r *relay) end() supervisor.Outcome {
	r.t.Helper()
	r.toRelay.Close()
	return r.wait()
}

func (r *relay) wait() supervisor.Outcome {
	r.t.Helper()
	select {
	case out := <-r.outcome:
		return out
	case <-time.After(waitLimit):
		r.t.Fatalf("supervisor did not end within %s", waitLimit)
	}
	return supervisor.Outcome{}
}

// sdkClient connects an official Go SDK client through the relay.
func (r *relay) sdkClient(version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	r.t.Helper()
	return r.sdkClientWith(mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1.0"}, opts), version)
}

// sdkClientWith connects the given client through the relay.
func (r *relay) sdkClientWith(c *mcp.Client, version string) *mcp.ClientSession {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	var so *mcp.ClientSessionOptions
	if version != "" {
		so = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: r.fromRly, Writer: r.toRelay}, so)
	if err != nil {
		r.t.Fatalf("connect (protocol %q): %v", version, err)
	}
	return cs
}

// rawHost speaks JSON-RPC lines to the relay directly, to see exactly what
// a host receives.
type rawHost struct {
	t    testing.TB
	r    *relay
	wmu  sync.Mutex
	msgs chan map[string]json.RawMessage
	// backlog holds messages read while waiting for another one.
	backlog []map[string]json.RawMessage
	all     struct {
		sync.Mutex
		lines [][]byte
	}
	sent map[string]int // request ids the host sent, by raw id; under wmu
}

func (r *relay) rawHost() *rawHost {
	h := &rawHost{t: r.t, r: r, msgs: make(chan map[string]json.RawMessage, 1024), sent: map[string]int{}}
	go func() {
		sc := bufio.NewScanner(r.fromRly)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			line := bytes.Clone(sc.Bytes())
			h.all.Lock()
			h.all.lines = append(h.all.lines, line)
			h.all.Unlock()
			var elems []json.RawMessage
			if bytes.HasPrefix(line, []byte("[")) {
				if err := json.Unmarshal(line, &elems); err != nil {
					elems = []json.RawMessage{line}
				}
			} else {
				elems = []json.RawMessage{line}
			}
			for _, el := range elems {
				var m map[string]json.RawMessage
				if err := json.Unmarshal(el, &m); err != nil {
					h.msgs <- map[string]json.RawMessage{"INVALID": json.RawMessage(fmt.Sprintf("%q", el))}
					continue
				}
				h.msgs <- m
			}
		}
		close(h.msgs)
	}()
	return h
}

func (h *rawHost) send(line string) {
	h.t.Helper()
	h.wmu.Lock()
	defer h.wmu.Unlock()
	for _, m := range jsonRPCMessages([]byte(line)) {
		if m["method"] != nil && m["id"] != nil {
			h.sent[string(m["id"])]++
		}
	}
	if _, err := io.WriteString(h.r.toRelay, line+"\n"); err != nil {
		h.t.Fatalf("host write: %v", err)
	}
}

// call sends a request and returns its response.
func (h *rawHost) call(id, method, params string) map[string]json.RawMessage {
	h.t.Helper()
	h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, params))
	return h.response(id)
}

// response waits for the response with the given raw id, failing on any
// line that is not JSON (a host would die of it).
func (h *rawHost) response(id string) map[string]json.RawMessage {
	h.t.Helper()
	return h.next("response to "+id, func(m map[string]json.RawMessage) bool {
		return string(m["id"]) == id && m["method"] == nil
	})
}

// next returns the first message, earlier ones included, that satisfies
// pred; messages passed over stay available to later calls.
func (h *rawHost) next(what string, pred func(map[string]json.RawMessage) bool) map[string]json.RawMessage {
	h.t.Helper()
	for i, m := range h.backlog {
		if pred(m) {
			h.backlog = append(h.backlog[:i], h.backlog[i+1:]...)
			return m
		}
	}
	deadline := time.After(waitLimit)
	for {
		select {
		case m, ok := <-h.msgs:
			if !ok {
				h.t.Fatalf("relay closed the host connection while waiting for %s", what)
			}
			if bad, isBad := m["INVALID"]; isBad {
				h.t.Fatalf("host received a line that is not JSON: %.300s", bad)
			}
			if pred(m) {
				return m
			}
			h.backlog = append(h.backlog, m)
		case <-deadline:
			h.t.Fatalf("no %s within %s", what, waitLimit)
		}
	}
}

// initialize performs the classic handshake.
func (h *rawHost) initialize(version string) map[string]json.RawMessage {
	h.t.Helper()
	resp := h.call(`0`, "initialize", fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{"roots":{}},"clientInfo":{"name":"raw","version":"1"}}`, version))
	if resp["result"] == nil {
		h.t.Fatalf("initialize failed: %s", resp["error"])
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return resp
}

// countByID counts the responses the host received per id (after the
// relay closed the connection, so the count is final).
func (h *rawHost) countByID() map[string]int {
	h.t.Helper()
	select {
	case <-h.closed():
	case <-time.After(waitLimit):
		h.t.Fatal("host connection still open")
	}
	h.all.Lock()
	defer h.all.Unlock()
	n := map[string]int{}
	for _, line := range h.all.lines {
		for _, m := range jsonRPCMessages(line) {
			if m["method"] == nil && m["id"] != nil {
				n[string(m["id"])]++
			}
		}
	}
	return n
}

// checkOneAnswerEach fails the test unless every request the host sent got
// exactly one response once the relay closed the connection.
func (h *rawHost) checkOneAnswerEach() {
	h.t.Helper()
	answered := h.countByID()
	h.wmu.Lock()
	defer h.wmu.Unlock()
	testenv.CheckOneAnswerEach(h.t, h.sent, answered)
}

// jsonRPCMessages decodes a line: one message, or each element of a batch.
// What is not a JSON object is left out.
func jsonRPCMessages(line []byte) []map[string]json.RawMessage {
	elems := []json.RawMessage{line}
	if bytes.HasPrefix(line, []byte("[")) {
		json.Unmarshal(line, &elems)
	}
	var msgs []map[string]json.RawMessage
	for _, el := range elems {
		var m map[string]json.RawMessage
		if json.Unmarshal(el, &m) == nil {
			msgs = append(msgs, m)
		}
	}
	return msgs
}

func (h *rawHost) closed() <-chan struct{} {
	done := make(chan struct{})
	go func() {
		for range h.msgs {
		}
		close(done)
	}()
	return done
}

// errorCode returns the JSON-RPC error code of a response, or 0.
func errorCode(m map[string]json.RawMessage) int {
	var e struct {
		Code int `json:"code"`
	}
	if m["error"] == nil || json.Unmarshal(m["error"], &e) != nil {
		return 0
	}
	return e.Code
}

// toolText returns the text of a tools/call result.
func toolText(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "")
}

func callTool(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if args == nil {
		args = map[string]any{} // TypeScript servers reject null arguments
	}
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

func mustCallTool(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res, err := callTool(t, cs, name, args)
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("tools/call %s returned a tool error: %s", name, toolText(t, res))
	}
	return toolText(t, res)
}
