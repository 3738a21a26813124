package supervisor_test

//lint:file-ignore SA1019 the relay must carry roots, sampling and logging, which the SDK marks deprecated for the stateless protocol

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// Server→host requests reach the host under mcpsandbox ids, so they cannot
// collide with the host's own ids (both sides count from small integers),
// and the host's answer goes back under the server's id.
func TestServerToHostRequestsWithCollidingIDs(t *testing.T) {
	r := startRelay(t, testPolicy(exampleCommand(t)))
	h := r.rawHost()
	h.initialize("2025-06-18")
	// The Go SDK server numbers its requests from 1: host id 1 is in
	// flight when the server asks roots/list with its own id 1.
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"roots","arguments":{}}}`)
	ask := h.next("roots/list from the server", func(m map[string]json.RawMessage) bool {
		return string(m["method"]) == `"roots/list"`
	})
	var id string
	if json.Unmarshal(ask["id"], &id) != nil || !strings.HasPrefix(id, "mcpsandbox:g1:") {
		t.Fatalf("server→host request id %s, want a string id of mcpsandbox's for generation 1", ask["id"])
	}
	h.send(`{"jsonrpc":"2.0","id":` + string(ask["id"]) + `,"result":{"roots":[{"uri":"file:///a"},{"uri":"file:///b"}]}}`)
	if resp := h.response(`1`); !strings.Contains(string(resp["result"]), "2 roots") {
		t.Fatalf("tool result %s, want the server to have got the host's 2 roots", resp)
	}
	r.end()
}

// When the server dies while its request to the host is pending, the host
// gets notifications/cancelled for it, and a late answer is dropped.
func TestPendingServerRequestsCancelledOnCrash(t *testing.T) {
	r := startRelay(t, testPolicy(exampleCommand(t)))
	h := r.rawHost()
	h.initialize("2025-06-18")
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"roots","arguments":{}}}`)
	ask := h.next("roots/list", func(m map[string]json.RawMessage) bool { return string(m["method"]) == `"roots/list"` })
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"crash","arguments":{"code":9}}}`)
	cancel := h.next("notifications/cancelled", func(m map[string]json.RawMessage) bool {
		return string(m["method"]) == `"notifications/cancelled"`
	})
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    string
	}
	json.Unmarshal(cancel["params"], &p)
	if string(p.RequestID) != string(ask["id"]) || !strings.Contains(p.Reason, "exited with status 9") {
		t.Errorf("cancellation %s, want requestId %s and the reason", cancel["params"], ask["id"])
	}
	for _, id := range []string{`1`, `2`} {
		if resp := h.response(id); errorCode(resp) != supervisor.CodeServerCrashed {
			t.Errorf("request %s: %s", id, resp)
		}
	}
	r.waitEvent(supervisor.EventReady)
	// The late answer must not reach the new process (whose own request
	// ids start over); the session stays usable.
	h.send(`{"jsonrpc":"2.0","id":` + string(ask["id"]) + `,"result":{"roots":[]}}`)
	if resp := h.call(`3`, "tools/call", `{"name":"echo","arguments":{"text":"fine"}}`); !strings.Contains(string(resp["result"]), "fine") {
		t.Errorf("after the crash: %s", resp)
	}
	r.end()
	h.checkOneAnswerEach()
}

// The Go SDK host handles the server's roots/list through the relay.
func TestServerToHostRequestSDKHost(t *testing.T) {
	r := startRelay(t, testPolicy(exampleCommand(t)))
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	c.AddRoots(&mcp.Root{URI: "file:///work", Name: "work"})
	cs := r.sdkClientWith(c, "2025-11-25")
	if got := mustCallTool(t, cs, "roots", nil); got != "1 roots" {
		t.Errorf("roots tool: %q", got)
	}
	cs.Close()
	r.end()
}
