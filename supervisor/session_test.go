package supervisor_test

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// A second initialize from the host never reaches the server process (Go
// SDK servers reject one): it is answered from the session cache.
func TestSecondInitializeAnsweredFromCache(t *testing.T) {
	r := startRelay(t, testPolicy(exampleCommand(t)))
	h := r.rawHost()
	first := h.initialize("2025-06-18")
	again := h.call(`"again"`, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`)
	if string(again["result"]) != string(first["result"]) {
		t.Errorf("second initialize: %s, want the first result %s", again, first["result"])
	}
	if resp := h.call(`1`, "tools/call", `{"name":"echo","arguments":{"text":"x"}}`); resp["result"] == nil {
		t.Errorf("session after the second initialize: %s", resp)
	}
	r.end()
}

// A request the host cancelled gets no crash error when the server dies
// (the host no longer expects an answer); the others in flight do. The
// server here reads everything and answers nothing.
func TestCancelledRequestNotAnsweredAtCrash(t *testing.T) {
	r := startRelay(t, testPolicy([]string{"sh", "-c", "while read line; do :; done"}))
	started := r.waitEvent(supervisor.EventStarted)
	h := r.rawHost()
	h.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	h.send(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"user gave up"}}`)
	// The relay reads host messages in order: once it answered a later
	// invalid request itself, it has seen the cancellation.
	h.send(`{"id":"barrier","method":"x"}`)
	h.response(`"barrier"`)
	syscall.Kill(started.Pid, syscall.SIGKILL)
	if resp := h.response(`6`); errorCode(resp) != supervisor.CodeServerCrashed {
		t.Errorf("request 6 at the crash: %s", resp)
	}
	r.waitEvent(supervisor.EventReady)
	r.end()
	if n := h.countByID(); n["5"] != 0 || n["6"] != 1 {
		t.Errorf("answers per id %v: want none for the cancelled 5, one for 6", n)
	}
}

// The default Go SDK client speaks the stateless 2026-07-28 protocol: a
// crash costs the call in flight, and the next calls work with nothing to
// replay.
func TestStatelessSessionSurvivesCrash(t *testing.T) {
	r := startRelay(t, testPolicy(exampleCommand(t)))
	cs := r.sdkClient("", nil)
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s, want the stateless 2026-07-28", v)
	}
	before := mustCallTool(t, cs, "instance", nil)
	_, err := callTool(t, cs, "crash", map[string]any{"code": 4})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != supervisor.CodeServerCrashed {
		t.Fatalf("crash call: %v", err)
	}
	r.waitEvent(supervisor.EventReady)
	if after := mustCallTool(t, cs, "instance", nil); after == before {
		t.Error("no new process answered")
	}
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Errorf("tools/list after the restart: %v", err)
	}
	cs.Close()
	r.end()
}
