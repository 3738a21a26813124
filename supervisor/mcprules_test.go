package supervisor_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// toolNames lists every tool the host sees, following pagination.
func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		names = append(names, tool.Name)
	}
	sort.Strings(names)
	return names
}

// wantDenied checks that a tools/call failed with the policy's error naming
// the tool and the rule.
func wantDenied(t *testing.T, cs *mcp.ClientSession, tool, rule string) {
	t.Helper()
	_, err := callTool(t, cs, tool, nil)
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != supervisor.CodePolicyDenied ||
		!strings.Contains(werr.Message, fmt.Sprintf("%q is denied by mcpsandbox's policy", tool)) || !strings.Contains(werr.Message, rule) {
		t.Errorf("tools/call %s: %v; want error %d saying the policy denied it (%s)", tool, err, supervisor.CodePolicyDenied, rule)
	}
}

func TestToolRulesServerEverything(t *testing.T) {
	pol := npmPolicy(t, "server-everything", "stdio")
	pol.AllowTools = []string{"echo", "get-*"}
	pol.DenyTools = []string{"get-sum"}
	r := startRelay(t, pol)
	cs := r.sdkClient("", nil)

	names := toolNames(t, cs)
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
		if n != "echo" && !strings.HasPrefix(n, "get-") || n == "get-sum" {
			t.Errorf("tools/list shows %s, which the rules hide", n)
		}
	}
	if !have["echo"] || !have["get-roots-list"] {
		t.Errorf("tools/list %v lacks allowed tools", names)
	}
	if got := mustCallTool(t, cs, "echo", map[string]any{"message": "still here"}); !strings.Contains(got, "still here") {
		t.Errorf("echo: %q", got)
	}
	wantDenied(t, cs, "get-sum", "DenyTools")                      // deny wins over allow
	wantDenied(t, cs, "trigger-sampling-request", "no AllowTools") // outside the allow list
	cs.Close()
	if out := r.end(); out.Failed {
		t.Errorf("outcome %+v", out)
	}
}

// A denied tools/call never reaches the server: "crash" would end it. In a
// batch, the refusal and the relayed call are each answered once.
func TestDeniedToolNeverReachesServer(t *testing.T) {
	pol := testPolicy(exampleCommand(t))
	pol.DenyTools = []string{"cr?sh"}
	r := startRelay(t, pol)
	h := r.rawHost()
	h.initialize("2025-03-26") // the last version with batches
	h.send(`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"crash","arguments":{"code":3}}},` +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ok"}}}]`)
	if resp := h.response("1"); errorCode(resp) != supervisor.CodePolicyDenied {
		t.Errorf("denied call answered %s", resp["error"])
	}
	if resp := h.response("2"); resp["result"] == nil {
		t.Errorf("allowed call answered %s", resp["error"])
	}
	// A name the rules cannot check is refused too, rather than relayed.
	if resp := h.call("3", "tools/call", `{"name":7}`); errorCode(resp) != supervisor.CodePolicyDenied {
		t.Errorf("call without a string name answered %v", resp)
	}
	// The Go SDK server would read the last spelling, case-insensitively.
	if resp := h.call("5", "tools/call", `{"name":"echo","NAME":"crash","arguments":{"code":3}}`); errorCode(resp) != supervisor.CodePolicyDenied {
		t.Errorf("call with a name spelt two ways answered %v", resp)
	}
	if resp := h.call("4", "tools/call", `{"name":"instance","arguments":{}}`); resp["result"] == nil {
		t.Errorf("after the refusals: %s", resp["error"])
	}
	r.end()
	h.checkOneAnswerEach()
	if strings.Contains(r.logs.String(), "crashing on request") {
		t.Error("the denied crash call reached the server")
	}
}

// servePaged is a Go SDK server that pages tools/list two tools at a time.
func servePaged() {
	s := mcp.NewServer(&mcp.Implementation{Name: "paged", Version: "1"}, &mcp.ServerOptions{PageSize: 2})
	for _, name := range []string{"a1", "a2", "b1", "b2", "b3", "c1"} {
		mcp.AddTool(s, &mcp.Tool{Name: name}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil, nil
		})
	}
	s.Run(context.Background(), &mcp.StdioTransport{})
}

// Filtering keeps the server's cursors: the host pages through every
// allowed tool, across pages the rules emptied.
func TestToolRulesKeepPagination(t *testing.T) {
	exe := exampleCommand(t)[0]
	pol := testPolicy([]string{exe, rolePagedServer})
	pol.DenyTools = []string{"b*", "a1"}
	r := startRelay(t, pol)
	cs := r.sdkClient("2025-11-25", nil)
	if got := strings.Join(toolNames(t, cs), ","); got != "a2,c1" {
		t.Errorf("tools across pages: %s, want a2,c1", got)
	}
	cs.Close()
	r.end()
}

// A tools/call over --call-timeout: the host gets CodeCallTimeout, the
// server notifications/cancelled (its sleep ends early), the late answer
// is dropped, and the session goes on.
func TestCallTimeout(t *testing.T) {
	pol := testPolicy(exampleCommand(t))
	pol.CallTimeout = 300 * time.Millisecond
	r := startRelay(t, pol)
	cs := r.sdkClient("", nil)
	_, err := callTool(t, cs, "sleep", map[string]any{"ms": 60000})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != supervisor.CodeCallTimeout || !strings.Contains(werr.Message, "CallTimeout 300ms") {
		t.Fatalf("slow call: %v; want error %d naming the setting", err, supervisor.CodeCallTimeout)
	}
	r.logs.waitFor(t, "example server: sleep cancelled")
	if got := mustCallTool(t, cs, "sleep", map[string]any{"ms": 1}); got != "slept 1ms" {
		t.Errorf("quick call after the timeout: %q", got)
	}
	cs.Close()
	r.end()
}

// Exactly one answer per request: the late answer of a timed-out call does
// not reach the host, and calls answered in time are not timed out later.
func TestCallTimeoutOneAnswerEach(t *testing.T) {
	pol := testPolicy(exampleCommand(t))
	pol.CallTimeout = 200 * time.Millisecond
	r := startRelay(t, pol)
	h := r.rawHost()
	h.initialize("2025-06-18")
	h.send(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}`)
	if resp := h.call(`"quick"`, "tools/call", `{"name":"echo","arguments":{"text":"x"}}`); resp["result"] == nil {
		t.Errorf("quick call: %s", resp["error"])
	}
	if resp := h.response(`"slow"`); errorCode(resp) != supervisor.CodeCallTimeout {
		t.Errorf("slow call answered %v", resp)
	}
	r.logs.waitFor(t, "example server: sleep cancelled")
	r.logs.waitFor(t, "server answered an id that is not in flight; dropped")
	if resp := h.call(`"after"`, "tools/list", `{}`); resp["result"] == nil {
		t.Errorf("tools/list after the timeout: %s", resp["error"])
	}
	r.end()
	h.checkOneAnswerEach()
}

// --tool-prefix: the host sees and calls prefixed names, the server its
// own; the globs match the server's names; an unprefixed call is unknown.
func TestToolPrefix(t *testing.T) {
	pol := testPolicy(exampleCommand(t))
	pol.ToolPrefix = "ex_"
	pol.DenyTools = []string{"big"}
	r := startRelay(t, pol)
	cs := r.sdkClient("", nil)
	names := toolNames(t, cs)
	for _, n := range names {
		if !strings.HasPrefix(n, "ex_") || n == "ex_big" {
			t.Errorf("tools/list shows %s", n)
		}
	}
	if !strings.Contains(strings.Join(names, ","), "ex_echo") {
		t.Errorf("tools/list %v lacks ex_echo", names)
	}
	if got := mustCallTool(t, cs, "ex_echo", map[string]any{"text": "<&> ✓"}); got != "<&> ✓" {
		t.Errorf("ex_echo returned %q", got)
	}
	wantDenied(t, cs, "ex_big", "DenyTools")
	_, err := callTool(t, cs, "echo", map[string]any{"text": "x"})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != -32602 || !strings.Contains(werr.Message, `Unknown tool "echo"`) {
		t.Errorf("unprefixed call: %v; want -32602 unknown tool", err)
	}
	cs.Close()
	r.end()
}

// A host id in mcpsandbox's namespace is remapped in a rewritten tools/call
// too, whichever side of the params it sits.
func TestToolPrefixWithRemappedIDs(t *testing.T) {
	pol := testPolicy(exampleCommand(t))
	pol.ToolPrefix = "ex_"
	r := startRelay(t, pol)
	h := r.rawHost()
	h.initialize("2025-06-18")
	h.send(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"ex_echo","arguments":{"text":"after"}},"id":"mcpsandbox:a"}`)
	if resp := h.response(`"mcpsandbox:a"`); !strings.Contains(string(resp["result"]), "after") {
		t.Errorf("id after params: %v", resp)
	}
	if resp := h.call(`"mcpsandbox:b"`, "tools/call", `{"name":"ex_echo","arguments":{"text":"before"}}`); !strings.Contains(string(resp["result"]), "before") {
		t.Errorf("id before params: %v", resp)
	}
	r.end()
	h.checkOneAnswerEach()
}
