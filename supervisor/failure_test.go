package supervisor_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// A server that stops answering everything, pings included, is found by the
// heartbeat, killed and restarted; the hung call gets the crash error.
func TestHangFoundByHeartbeatAndRecovered(t *testing.T) {
	pol := testPolicy(exampleCommand(t))
	pol.PingInterval = 20 * time.Millisecond
	pol.PingTimeout = 100 * time.Millisecond
	pol.PingFailures = 2
	r := startRelay(t, pol)
	cs := r.sdkClient("2025-11-25", nil)
	before := mustCallTool(t, cs, "instance", nil)

	_, err := callTool(t, cs, "hang", nil)
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != supervisor.CodeServerCrashed || !strings.Contains(werr.Message, "hang") {
		t.Fatalf("hung call: %v, want error %d naming the hang", err, supervisor.CodeServerCrashed)
	}
	if ex := r.waitEvent(supervisor.EventExited); !strings.HasPrefix(ex.Reason, "hang:") {
		t.Errorf("exit reason %q, want hang", ex.Reason)
	}
	r.waitEvent(supervisor.EventReady)
	if after := mustCallTool(t, cs, "instance", nil); after == before {
		t.Error("the hung process is still the one answering")
	}
	cs.Close()
	r.end()
}

// Pings keep a healthy server alive through long calls: the Go SDK server
// answers them concurrently.
func TestHeartbeatLeavesBusyServerAlone(t *testing.T) {
	pol := testPolicy(exampleCommand(t))
	pol.PingInterval = 5 * time.Millisecond
	pol.PingTimeout = 500 * time.Millisecond
	pol.PingFailures = 1
	r := startRelay(t, pol)
	h := r.rawHost()
	h.initialize("2025-06-18")
	if resp := h.call(`1`, "tools/call", `{"name":"sleep","arguments":{"ms":300}}`); resp["result"] == nil {
		t.Fatalf("slow call: %s", resp)
	}
	for done := false; !done; {
		select {
		case e := <-r.events:
			if e.Kind != supervisor.EventStarted {
				t.Errorf("unexpected event %+v during a slow but healthy call", e)
			}
		default:
			done = true
		}
	}
	if !strings.Contains(r.logs.String(), "heartbeat answered") {
		t.Error("no ping was answered during the call: the heartbeat did not run")
	}
	r.end()
	h.all.Lock()
	defer h.all.Unlock()
	for _, line := range h.all.lines {
		if strings.Contains(string(line), "mcpsandbox:ping") {
			t.Errorf("a ping of mcpsandbox's reached the host: %s", line)
		}
	}
}

// Garbage lines on the server's stdout go to the log, never to the host
// (one would kill a Go SDK host), and the call still gets its answer.
func TestGarbageOnServerStdoutNeverReachesHost(t *testing.T) {
	r := startRelay(t, testPolicy(exampleCommand(t)))
	cs := r.sdkClient("2025-06-18", nil)
	for _, junk := range []string{"Server listening on stdio", `{"not":"jsonrpc"}`, `{"jsonrpc":"2.0","id":`} {
		if got := mustCallTool(t, cs, "garbage", map[string]any{"text": junk}); got != "wrote garbage" {
			t.Errorf("garbage call returned %q", got)
		}
	}
	if got := mustCallTool(t, cs, "echo", map[string]any{"text": "ok"}); got != "ok" {
		t.Errorf("echo after garbage: %q", got)
	}
	logs := r.logs.String()
	if !strings.Contains(logs, "Server listening on stdio") || !strings.Contains(logs, "not JSON-RPC") {
		t.Error("garbage lines are not in the log")
	}
	cs.Close()
	r.end()
}

// A response over --max-message is not relayed: the host gets one error for
// that request and the session goes on. The line is 24 MiB long: over the
// 16 MiB bound, and small enough that the race-instrumented example server
// encodes it well within the harness's wait (64 MiB took 18-20 s of its 20).
func TestOversizedLineFromServer(t *testing.T) {
	pol := testPolicy(exampleCommand(t))
	// Encoding the result takes the example server a few times its size,
	// more under -race.
	pol.Memory = 2 * policy.GiB
	r := startRelay(t, pol)
	h := r.rawHost()
	h.initialize("2025-06-18")
	resp := h.call(`1`, "tools/call", fmt.Sprintf(`{"name":"big","arguments":{"bytes":%d}}`, 24<<20))
	if errorCode(resp) != supervisor.CodeMessageTooLarge || !strings.Contains(string(resp["error"]), "16MiB") {
		t.Fatalf("24 MiB response: %.300s, want error %d naming the limit", resp, supervisor.CodeMessageTooLarge)
	}
	if echo := h.call(`2`, "tools/call", `{"name":"echo","arguments":{"text":"after"}}`); !strings.Contains(string(echo["result"]), "after") {
		t.Errorf("echo after the oversized response: %s", echo)
	}
	r.end()
	h.checkOneAnswerEach()
}

// A host request over --max-message is answered with an error without
// reaching the server, whether its id comes first or last; the relay never
// holds the 64 MiB line.
func TestOversizedLineFromHost(t *testing.T) {
	r := startRelay(t, testPolicy(exampleCommand(t)))
	h := r.rawHost()
	h.initialize("2025-06-18")
	huge := strings.Repeat("x", 64<<20)
	h.send(`{"jsonrpc":"2.0","id":"first","method":"tools/call","params":{"name":"echo","arguments":{"text":"` + huge + `"}}}`)
	h.send(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"text":"` + huge + `"}},"id":42}`)
	for _, id := range []string{`"first"`, `42`} {
		if resp := h.response(id); errorCode(resp) != supervisor.CodeMessageTooLarge {
			t.Errorf("oversized request %s: %s", id, resp)
		}
	}
	if echo := h.call(`2`, "tools/call", `{"name":"echo","arguments":{"text":"after"}}`); !strings.Contains(string(echo["result"]), "after") {
		t.Errorf("echo after the oversized request: %s", echo)
	}
	// The last 64 MiB arrive without a newline before the host hangs up.
	io.WriteString(r.toRelay, huge)
	if out := r.end(); out.Failed {
		t.Errorf("outcome %+v", out)
	}
}

// A message just under the bound passes whole, in both directions.
func TestLargeMessagesUnderTheBoundPass(t *testing.T) {
	pol := testPolicy(exampleCommand(t))
	r := startRelay(t, pol)
	cs := r.sdkClient("2025-06-18", nil)
	text := strings.Repeat("é", 4<<20) // 8 MiB of UTF-8 each way
	if got := mustCallTool(t, cs, "echo", map[string]any{"text": text}); got != text {
		t.Errorf("8 MiB echo came back with %d bytes", len(got))
	}
	if got := mustCallTool(t, cs, "big", map[string]any{"bytes": 15 << 20}); len(got) != 15<<20 {
		t.Errorf("15 MiB result came back with %d bytes", len(got))
	}
	cs.Close()
	r.end()
}

// Host ids in mcpsandbox's reserved namespace are remapped on the way to the
// server and restored on the way back, also in cancellations.
func TestHostIDsInReservedNamespace(t *testing.T) {
	r := startRelay(t, testPolicy(exampleCommand(t)))
	h := r.rawHost()
	h.initialize("2025-06-18")
	for _, id := range []string{`"mcpsandbox:ping:1:1"`, `"mcpsandbox:init:2"`} {
		resp := h.call(id, "tools/call", `{"name":"echo","arguments":{"text":"mine"}}`)
		if !strings.Contains(string(resp["result"]), "mine") {
			t.Errorf("request with id %s: %s", id, resp)
		}
	}
	r.end()
}

// JSON-RPC batches (protocol 2025-03-26) pass through with every id tracked:
// a crash answers each request of an in-flight batch.
func TestBatchesPassThroughAndAreTracked(t *testing.T) {
	r := startRelay(t, testPolicy(exampleCommand(t)))
	h := r.rawHost()
	h.initialize("2025-03-26")
	h.send(`[{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}},` +
		`{"jsonrpc":"2.0","id":"mcpsandbox:x","method":"tools/call","params":{"name":"echo","arguments":{"text":"b"}}}]`)
	if resp := h.response(`10`); !strings.Contains(string(resp["result"]), `"a"`) {
		t.Errorf("batch element 10: %s", resp)
	}
	if resp := h.response(`"mcpsandbox:x"`); !strings.Contains(string(resp["result"]), `"b"`) {
		t.Errorf("batch element with a reserved id: %s", resp)
	}
	h.send(`[{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}},` +
		`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"crash","arguments":{"code":5}}}]`)
	for _, id := range []string{`11`, `12`} {
		if resp := h.response(id); errorCode(resp) != supervisor.CodeServerCrashed {
			t.Errorf("batch element %s at the crash: %s", id, resp)
		}
	}
	r.waitEvent(supervisor.EventReady)
	r.end()
	h.checkOneAnswerEach()
}

// Invalid host input gets JSON-RPC errors, not silence and not a crash.
func TestInvalidHostInputIsAnswered(t *testing.T) {
	r := startRelay(t, testPolicy(exampleCommand(t)))
	h := r.rawHost()
	h.initialize("2025-06-18")
	h.send(`this is not json`)
	h.send(`{"id":5,"method":"tools/list"}`)
	parse := h.next("parse error", func(m map[string]json.RawMessage) bool { return errorCode(m) == -32700 })
	if string(parse["id"]) != "null" {
		t.Errorf("parse error id %s, want null", parse["id"])
	}
	if resp := h.response(`5`); errorCode(resp) != -32600 {
		t.Errorf("request without jsonrpc 2.0: %s", resp)
	}
	r.end()
}

// Shutdown escalates for a server that ignores its stdin closing: SIGTERM
// after --grace, and nothing of it is left afterwards.
func TestShutdownEscalatesForServerIgnoringEOF(t *testing.T) {
	pol := testPolicy(exampleCommand(t))
	pol.Grace = 50 * time.Millisecond
	r := startRelay(t, pol)
	started := r.waitEvent(supervisor.EventStarted)
	h := r.rawHost()
	h.initialize("2025-06-18")
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hang","arguments":{}}}`)
	r.logs.waitFor(t, "hanging on request") // the server's stderr, in the log
	out := r.end()
	if out.Failed {
		t.Errorf("outcome %+v", out)
	}
	if logs := r.logs.String(); !strings.Contains(logs, "still running after grace period") {
		t.Error("the log does not show the escalation past stdin EOF")
	}
	if !gone(started.Pid, 0) {
		t.Errorf("server pid %d still runs after shutdown", started.Pid)
	}
}

// A hung server that stops reading its stdin blocks the relay's writes to
// it once the pipe is full; the heartbeat still finds the hang, and every
// request (the one stuck in the pipe too) gets one answer.
func TestHangWithFullStdinPipe(t *testing.T) {
	pol := testPolicy(exampleCommand(t))
	pol.PingInterval = 20 * time.Millisecond
	pol.PingTimeout = 100 * time.Millisecond
	pol.PingFailures = 2
	r := startRelay(t, pol)
	h := r.rawHost()
	h.initialize("2025-06-18")
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hang","arguments":{}}}`)
	r.logs.waitFor(t, "hanging on request")
	big := strings.Repeat("z", 1<<20) // far more than a pipe holds
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + big + `"}}}`)
	h.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"queued"}}}`)
	for _, id := range []string{`1`, `2`} {
		if resp := h.response(id); errorCode(resp) != supervisor.CodeServerCrashed {
			t.Errorf("request %s: %.200s", id, resp)
		}
	}
	// Request 3 was read after the kill or held for the new process.
	if resp := h.response(`3`); !strings.Contains(string(resp["result"]), "queued") && errorCode(resp) != supervisor.CodeServerCrashed {
		t.Errorf("request 3: %s", resp)
	}
	r.waitEvent(supervisor.EventReady)
	if resp := h.call(`4`, "tools/call", `{"name":"echo","arguments":{"text":"alive"}}`); !strings.Contains(string(resp["result"]), "alive") {
		t.Errorf("after the hang: %s", resp)
	}
	r.end()
	h.checkOneAnswerEach()
}

// A host that stops reading is not the server's fault: while the relay is
// blocked writing to the host, the server's ping answers wait behind, and
// the heartbeat does not count those misses.
func TestSlowHostIsNotMistakenForHungServer(t *testing.T) {
	pol := testPolicy(exampleCommand(t))
	pol.PingInterval = 10 * time.Millisecond
	pol.PingTimeout = 30 * time.Millisecond
	pol.PingFailures = 2
	r := startRelay(t, pol)
	// The host sends, but does not read yet: the answer to initialize
	// blocks the relay's write to the host.
	io.WriteString(r.toRelay, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`+"\n")
	r.logs.waitForCount(t, "not counted", 2*pol.PingFailures)
	h := r.rawHost()
	if resp := h.response(`0`); resp["result"] == nil {
		t.Fatalf("initialize: %s", resp)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if resp := h.call(`1`, "tools/call", `{"name":"echo","arguments":{"text":"x"}}`); resp["result"] == nil {
		t.Fatalf("echo: %s", resp)
	}
	out := r.end()
	for done := false; !done; {
		select {
		case e := <-r.events:
			if e.Kind == supervisor.EventExited && strings.HasPrefix(e.Reason, "hang") {
				t.Errorf("server killed as hung while the host was not reading: %+v", e)
			}
		default:
			done = true
		}
	}
	if out.Restarts != 0 {
		t.Errorf("outcome %+v, want no restart", out)
	}
}

// A server that answers ping with -32601 is alive but cannot be pinged: the
// heartbeat falls back to process liveness in a classic session, and to
// server/discover in a stateless one.
func TestHeartbeatFallbackForServerWithoutPing(t *testing.T) {
	exe := exampleCommand(t)[0]
	for _, tc := range []struct{ name, version, fallback string }{
		{"classic", "2025-06-18", "falls back to process liveness"},
		{"stateless", "", "probes with server/discover"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pol := testPolicy([]string{exe, roleNoPingServer})
			pol.PingInterval = 10 * time.Millisecond
			pol.PingTimeout = 2 * time.Second
			pol.PingFailures = 1
			r := startRelay(t, pol)
			cs := r.sdkClient(tc.version, nil)
			mustCallTool(t, cs, "echo", map[string]any{"text": "x"})
			r.logs.waitFor(t, tc.fallback)
			if tc.version == "" {
				r.logs.waitFor(t, "method=server/discover")
			}
			if got := mustCallTool(t, cs, "echo", map[string]any{"text": "still"}); got != "still" {
				t.Errorf("echo: %q", got)
			}
			cs.Close()
			if out := r.end(); out.Restarts != 0 {
				t.Errorf("outcome %+v: the server was restarted", out)
			}
		})
	}
}
