package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// The MCP rule flags reach the relay, and its errors name them as flags.
func TestRunToolRulesAndCallTimeout(t *testing.T) {
	requireConfinement(t)
	m := startRun(t, "--deny-tool", "b?g", "--call-timeout", "200ms", "--tool-prefix", "ex_")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	tools, err := m.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.Name == "ex_big" || !strings.HasPrefix(tool.Name, "ex_") {
			t.Errorf("tools/list shows %s; want ex_ names without ex_big", tool.Name)
		}
	}
	call := func(tool string, args map[string]any) *jsonrpc.Error {
		_, err := m.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) {
			t.Fatalf("%s: %v, want a JSON-RPC error", tool, err)
		}
		return werr
	}
	if e := call("ex_big", map[string]any{"bytes": 1}); e.Code != supervisor.CodePolicyDenied || !strings.Contains(e.Message, "--deny-tool") {
		t.Errorf("denied call: %d %q", e.Code, e.Message)
	}
	if e := call("ex_sleep", map[string]any{"ms": 60000}); e.Code != supervisor.CodeCallTimeout || !strings.Contains(e.Message, "--call-timeout 200ms") {
		t.Errorf("slow call: %d %q", e.Code, e.Message)
	}
	if got := m.call(t, "ex_echo", map[string]any{"text": "on"}); got != "on" {
		t.Errorf("echo answered %q", got)
	}
	m.cs.Close()
	if code := m.wait(t); code != exitOK {
		t.Errorf("exit status %d, want 0", code)
	}
}
