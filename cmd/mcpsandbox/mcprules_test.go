package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/demo"
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

// The prompt, resource and rate-limit flags reach the relay, and its
// errors name them as flags.
func TestRunPromptResourceAndRateRules(t *testing.T) {
	requireConfinement(t)
	m := startRun(t, "--deny-prompt", "gr*", "--deny-resource", "example://*", "--rate-limit", "100/1m", "--rate-limit", "echo=1/1h")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	refused := func(what string, err error, code int64, flag string) {
		t.Helper()
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != code || !strings.Contains(werr.Message, flag) {
			t.Errorf("%s: %v; want error %d naming %s", what, err, code, flag)
		}
	}
	if prompts, err := m.cs.ListPrompts(ctx, nil); err != nil || len(prompts.Prompts) != 0 {
		t.Errorf("prompts/list: %v %v, want none", prompts, err)
	}
	_, err := m.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: demo.ExamplePrompt, Arguments: map[string]string{"name": "x"}})
	refused("prompts/get", err, supervisor.CodePolicyDenied, "--deny-prompt")
	if res, err := m.cs.ListResources(ctx, nil); err != nil || len(res.Resources) != 0 {
		t.Errorf("resources/list: %v %v, want none", res, err)
	}
	_, err = m.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: demo.ExampleResource})
	refused("resources/read", err, supervisor.CodePolicyDenied, "--deny-resource")
	if got := m.call(t, "echo", map[string]any{"text": "once"}); got != "once" {
		t.Errorf("echo answered %q", got)
	}
	_, err = m.cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "twice"}})
	refused("second echo", err, supervisor.CodeRateLimited, "--rate-limit")
	if got := m.call(t, "instance", nil); got == "" {
		t.Error("instance answered nothing")
	}
	m.cs.Close()
	if code := m.wait(t); code != exitOK {
		t.Errorf("exit status %d, want 0", code)
	}
}

// A bad rate limit is refused before anything starts, with the fix.
func TestRunRejectsBadRateLimit(t *testing.T) {
	var stderr strings.Builder
	code := cli([]string{"run", "--rate-limit", "5 per minute", "--", "true"}, stdio{In: strings.NewReader(""), Out: io.Discard, Err: &stderr})
	if code != exitUsage || !strings.Contains(stderr.String(), "--rate-limit") || !strings.Contains(stderr.String(), "e.g. 60/1m or 'write_*=5/1m'") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}
