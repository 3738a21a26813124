package supervisor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

func rulesServer(t *testing.T) []string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, roleRulesServer}
}

// wantRefused checks that err is mcpsandbox's error code whose message
// holds every one of want.
func wantRefused(t *testing.T, what string, err error, code int64, want ...string) *jsonrpc.Error {
	t.Helper()
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != code {
		t.Errorf("%s: %v; want error %d", what, err, code)
		return &jsonrpc.Error{}
	}
	for _, w := range want {
		if !strings.Contains(werr.Message, w) {
			t.Errorf("%s: message %q lacks %q", what, werr.Message, w)
		}
	}
	return werr
}

// serverCount asks the rules server how many requests of method it got.
func serverCount(t *testing.T, cs *mcp.ClientSession, method string) string {
	t.Helper()
	return mustCallTool(t, cs, "count", map[string]any{"method": method})
}

// allPrompts, allResources and allTemplates follow pagination.
func allPrompts(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	var names []string
	for p, err := range cs.Prompts(context.Background(), nil) {
		if err != nil {
			t.Fatalf("prompts/list: %v", err)
		}
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

func allResources(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	var uris []string
	for r, err := range cs.Resources(context.Background(), nil) {
		if err != nil {
			t.Fatalf("resources/list: %v", err)
		}
		uris = append(uris, r.URI)
	}
	sort.Strings(uris)
	return strings.Join(uris, ",")
}

func allTemplates(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	var uris []string
	for r, err := range cs.ResourceTemplates(context.Background(), nil) {
		if err != nil {
			t.Fatalf("resources/templates/list: %v", err)
		}
		uris = append(uris, r.URITemplate)
	}
	sort.Strings(uris)
	return strings.Join(uris, ",")
}

// Denied prompts and resources vanish from their lists, across the
// server's pages, and the requests naming them never reach the server.
func TestPromptAndResourceRules(t *testing.T) {
	pol := testPolicy(rulesServer(t))
	pol.DenyPrompts = []string{"secret-*"}
	pol.DenyResources = []string{"res://secret/*"} // * crosses '/': res://secret/deep/2 too
	r := startRelay(t, pol)
	cs := r.sdkClient("2025-11-25", nil)
	ctx := context.Background()

	if got := allPrompts(t, cs); got != "open-1,open-2,release" {
		t.Errorf("prompts across pages: %s", got)
	}
	if got := allResources(t, cs); got != "res://open/1,res://open/2" {
		t.Errorf("resources across pages: %s", got)
	}
	if got := allTemplates(t, cs); got != "res://open/{id}" {
		t.Errorf("templates across pages: %s", got)
	}

	_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "secret-2"})
	wantRefused(t, "prompts/get secret-2", err, supervisor.CodePolicyDenied, `prompt "secret-2" is denied`, "DenyPrompts")
	if res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "open-1"}); err != nil || len(res.Messages) != 1 {
		t.Errorf("prompts/get open-1: %v", err)
	}
	for _, uri := range []string{"res://secret/deep/2", "res://secret/x/7"} {
		_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		wantRefused(t, "read "+uri, err, supervisor.CodePolicyDenied, fmt.Sprintf("resource %q is denied", uri), "DenyResources")
	}
	// Spellings a server may resolve to a denied URI are not checked one
	// way and read another.
	for _, uri := range []string{"res://open/../secret/1", "res://open/%2e%2e/secret/1", "RES://secret/1"} {
		_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		wantRefused(t, "read "+uri, err, supervisor.CodePolicyDenied, "cannot be checked")
	}
	if res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "res://open/9"}); err != nil || res.Contents[0].Text != "res://open/{id}" {
		t.Errorf("read res://open/9 (a template): %v", err)
	}
	err = cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "res://secret/3"})
	wantRefused(t, "subscribe res://secret/3", err, supervisor.CodePolicyDenied, "DenyResources")
	_, err = cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "secret-1"}, Argument: mcp.CompleteParamsArgument{Name: "x"}})
	wantRefused(t, "complete secret-1", err, supervisor.CodePolicyDenied, "DenyPrompts")

	for method, want := range map[string]string{"prompts/get": "1", "resources/read": "1", "resources/subscribe": "0", "completion/complete": "0"} {
		if got := serverCount(t, cs, method); got != want {
			t.Errorf("the server got %s %s times, want %s: a refused one reached it", method, got, want)
		}
	}
	cs.Close()
	r.end()
}

// The allow lists: only matching prompts and resources exist.
func TestPromptAndResourceAllowLists(t *testing.T) {
	pol := testPolicy(rulesServer(t))
	pol.AllowPrompts = []string{"open-?"}
	pol.AllowResources = []string{"res://open/*"}
	r := startRelay(t, pol)
	cs := r.sdkClient("2025-11-25", nil)
	if got := allPrompts(t, cs); got != "open-1,open-2" {
		t.Errorf("prompts: %s", got)
	}
	if got := allTemplates(t, cs); got != "res://open/{id}" {
		t.Errorf("templates: %s", got)
	}
	_, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "release"})
	wantRefused(t, "prompts/get release", err, supervisor.CodePolicyDenied, "no AllowPrompts")
	_, err = cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "res://secret/1"})
	wantRefused(t, "read res://secret/1", err, supervisor.CodePolicyDenied, "no AllowResources")
	cs.Close()
	r.end()
}

// notifications/resources/updated of a denied URI never reaches the host;
// the allowed one does. The server sends res://secret/1's update just
// before res://open/1's, both before its answer to touch.
func TestDeniedResourceUpdatesDropped(t *testing.T) {
	pol := testPolicy(rulesServer(t))
	pol.DenyResources = []string{"res://secret/*"}
	r := startRelay(t, pol)
	h := r.rawHost()
	h.initialize("2025-06-18")
	if resp := h.call("1", "resources/subscribe", `{"uri":"res://open/1"}`); resp["result"] == nil {
		t.Fatalf("subscribe: %s", resp["error"])
	}
	if resp := h.call("2", "tools/call", `{"name":"touch","arguments":{}}`); resp["result"] == nil {
		t.Fatalf("touch: %s", resp["error"])
	}
	h.next("the update of res://open/1", func(m map[string]json.RawMessage) bool {
		return string(m["method"]) == `"notifications/resources/updated"` && strings.Contains(string(m["params"]), "res://open/1")
	})
	h.all.Lock()
	for _, line := range h.all.lines {
		if strings.Contains(string(line), "res://secret/1") {
			t.Errorf("the host got %s", line)
		}
	}
	h.all.Unlock()
	// The message with a name spelt two ways is refused, never relayed.
	if resp := h.call("3", "resources/read", `{"uri":"res://open/1","URI":"res://secret/1"}`); errorCode(resp) != supervisor.CodePolicyDenied {
		t.Errorf("read with the uri spelt two ways: %v", resp)
	}
	r.end()
	h.checkOneAnswerEach()
}
