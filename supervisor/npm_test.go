package supervisor_test

//lint:file-ignore SA1019 the relay must carry roots, sampling and logging, which the SDK marks deprecated for the stateless protocol

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// The npm reference servers (TypeScript SDK) through the relay, driven by
// the Go SDK client, which tries the 2026-07-28 server/discover first and
// falls back to initialize.

// npmPolicy runs an npm reference server confined, with its installed
// package tree visible read-only.
func npmPolicy(t *testing.T, server string, args ...string) policy.Policy {
	entry := testenv.NPMServer(t, server)
	pol := testPolicy(append([]string{"node", entry}, args...))
	pol.ReadOnly = []string{filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(entry))))} // node_modules
	return pol
}

// writableBySandbox opens dir to the sandbox's dynamic, unprivileged user
// (the tests run as root, so it would otherwise be root's alone).
func writableBySandbox(t *testing.T, dir string) string {
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestServerEverything(t *testing.T) {
	r := startRelay(t, npmPolicy(t, "server-everything", "stdio"))
	sampled := make(chan string, 1)
	c := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1.0"}, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			sampled <- req.Params.Messages[0].Content.(*mcp.TextContent).Text
			return &mcp.CreateMessageResult{Model: "test-model", Role: "assistant", Content: &mcp.TextContent{Text: "sampled by the host"}}, nil
		},
	})
	c.AddRoots(&mcp.Root{URI: "file:///srv/project", Name: "project"})
	cs := r.sdkClientWith(c, "")
	ctx := context.Background()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, tool := range tools.Tools {
		have[tool.Name] = true
	}
	for _, want := range []string{"echo", "get-sum", "trigger-sampling-request", "get-roots-list"} {
		if !have[want] {
			t.Errorf("tools/list lacks %s", want)
		}
	}
	if got := mustCallTool(t, cs, "echo", map[string]any{"message": "hi there"}); !strings.Contains(got, "hi there") {
		t.Errorf("echo: %q", got)
	}
	if got := mustCallTool(t, cs, "get-sum", map[string]any{"a": 2, "b": 40}); !strings.Contains(got, "42") {
		t.Errorf("get-sum: %q", got)
	}

	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(prompts.Prompts) == 0 {
		t.Fatalf("prompts/list: %v %+v", err, prompts)
	}
	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "simple-prompt"})
	if err != nil || !strings.Contains(p.Messages[0].Content.(*mcp.TextContent).Text, "simple prompt") {
		t.Errorf("prompts/get: %v %+v", err, p)
	}
	res, err := cs.ListResources(ctx, nil)
	if err != nil || len(res.Resources) == 0 {
		t.Fatalf("resources/list: %v", err)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: res.Resources[0].URI})
	if err != nil || len(rr.Contents) == 0 {
		t.Errorf("resources/read %s: %v", res.Resources[0].URI, err)
	}

	// The server's own requests to the host: sampling and roots.
	got := mustCallTool(t, cs, "trigger-sampling-request", map[string]any{"prompt": "write a haiku"})
	if !strings.Contains(got, "sampled by the host") {
		t.Errorf("sampling result %q lacks the host's answer", got)
	}
	select {
	case prompt := <-sampled:
		if !strings.Contains(prompt, "write a haiku") {
			t.Errorf("host got sampling prompt %q", prompt)
		}
	default:
		t.Error("the host's sampling handler was not called")
	}
	if got := mustCallTool(t, cs, "get-roots-list", nil); !strings.Contains(got, "file:///srv/project") {
		t.Errorf("roots the server got from the host: %q", got)
	}
	cs.Close()
	if out := r.end(); out.Failed {
		t.Errorf("outcome %+v", out)
	}
}

// server-everything numbers its requests to the host from 0, like the host
// numbers its own: with host request 1 in flight, the server's sampling
// request (its id 1) reaches the host under another id, and both complete.
func TestServerEverythingCollidingIDs(t *testing.T) {
	r := startRelay(t, npmPolicy(t, "server-everything", "stdio"))
	h := r.rawHost()
	init := h.call(`0`, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{"roots":{},"sampling":{}},"clientInfo":{"name":"raw","version":"1"}}`)
	if init["result"] == nil {
		t.Fatalf("initialize: %s", init)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// Its roots/list after initialization (server id 0).
	roots := h.next("roots/list", func(m map[string]json.RawMessage) bool { return string(m["method"]) == `"roots/list"` })
	h.send(`{"jsonrpc":"2.0","id":` + string(roots["id"]) + `,"result":{"roots":[]}}`)

	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"trigger-sampling-request","arguments":{"prompt":"p"}}}`)
	ask := h.next("sampling/createMessage", func(m map[string]json.RawMessage) bool {
		return string(m["method"]) == `"sampling/createMessage"`
	})
	if string(ask["id"]) == `1` || string(ask["id"]) == string(roots["id"]) || !strings.HasPrefix(string(ask["id"]), `"mcpsandbox:g1:`) {
		t.Fatalf("server→host ids %s and %s: want distinct relay ids, never the host's 1", roots["id"], ask["id"])
	}
	h.send(`{"jsonrpc":"2.0","id":` + string(ask["id"]) + `,"result":{"model":"m","role":"assistant","content":{"type":"text","text":"from host"}}}`)
	if resp := h.response(`1`); !strings.Contains(string(resp["result"]), "from host") {
		t.Errorf("tool result %s lacks the host's sampling answer", resp)
	}
	r.end()
	h.checkOneAnswerEach()
}

// server-everything ignores stdin EOF while its roots/list is unanswered:
// shutdown escalates to SIGTERM after --grace and leaves no process.
func TestServerEverythingShutdownWithPendingRoots(t *testing.T) {
	pol := npmPolicy(t, "server-everything", "stdio")
	pol.Grace = 300 * time.Millisecond
	r := startRelay(t, pol)
	started := r.waitEvent(supervisor.EventStarted)
	h := r.rawHost()
	h.initialize("2025-06-18") // declares roots
	h.next("roots/list", func(m map[string]json.RawMessage) bool { return string(m["method"]) == `"roots/list"` })
	if out := r.end(); out.Failed {
		t.Errorf("outcome %+v", out)
	}
	if !gone(started.Pid, 0) {
		t.Errorf("node pid %d still runs after shutdown", started.Pid)
	}
}

func TestServerFilesystem(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello from disk"), 0o644); err != nil {
		t.Fatal(err)
	}
	pol := npmPolicy(t, "server-filesystem", dir)
	pol.ReadWrite = []string{writableBySandbox(t, dir)}
	r := startRelay(t, pol)
	c := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1.0"}, nil)
	c.AddRoots(&mcp.Root{URI: "file://" + dir, Name: "tmp"})
	cs := r.sdkClientWith(c, "2025-06-18")
	if got := mustCallTool(t, cs, "read_text_file", map[string]any{"path": filepath.Join(dir, "notes.txt")}); !strings.Contains(got, "hello from disk") {
		t.Errorf("read_text_file: %q", got)
	}
	mustCallTool(t, cs, "write_file", map[string]any{"path": filepath.Join(dir, "out.txt"), "content": "written through the relay"})
	if b, err := os.ReadFile(filepath.Join(dir, "out.txt")); err != nil || string(b) != "written through the relay" {
		t.Errorf("write_file: %q %v", b, err)
	}
	cs.Close()
	r.end()
}

func TestServerMemory(t *testing.T) {
	pol := npmPolicy(t, "server-memory")
	dir := writableBySandbox(t, t.TempDir())
	pol.ReadWrite = []string{dir}
	pol.Env = []string{"MEMORY_FILE_PATH=" + filepath.Join(dir, "memory.jsonl")}
	r := startRelay(t, pol)
	cs := r.sdkClient("", nil)
	mustCallTool(t, cs, "create_entities", map[string]any{"entities": []map[string]any{
		{"name": "mcpsandbox", "entityType": "project", "observations": []string{"relays MCP"}},
	}})
	if got := mustCallTool(t, cs, "read_graph", nil); !strings.Contains(got, "relays MCP") {
		t.Errorf("read_graph: %q", got)
	}
	cs.Close()
	r.end()
}

// A TypeScript server killed in the middle of a call: the call fails once
// with the crash error, the new node process gets the session replayed
// (initialize, initialized), and the Go SDK host carries on.
func TestServerEverythingSurvivesKill(t *testing.T) {
	pol := npmPolicy(t, "server-everything", "stdio")
	pol.PingInterval = 200 * time.Millisecond
	pol.PingTimeout = 2 * time.Second
	r := startRelay(t, pol)
	started := r.waitEvent(supervisor.EventStarted)
	cs := r.sdkClient("", nil)
	errc := make(chan error, 1)
	go func() {
		_, err := callTool(t, cs, "trigger-long-running-operation", map[string]any{"duration": 30, "steps": 30})
		errc <- err
	}()
	// Kill it once the call is surely running: the server answers other
	// requests meanwhile, so a second call proves the first is in flight.
	mustCallTool(t, cs, "echo", map[string]any{"message": "concurrent"})
	if err := syscall.Kill(started.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != supervisor.CodeServerCrashed {
			t.Fatalf("long call at the kill: %v, want error %d", err, supervisor.CodeServerCrashed)
		}
	case <-time.After(waitLimit):
		t.Fatal("the call in flight was never answered")
	}
	if ex := r.waitEvent(supervisor.EventExited); ex.Reason != "killed by signal killed" {
		t.Errorf("exit reason %q", ex.Reason)
	}
	r.waitEvent(supervisor.EventReady)
	if got := mustCallTool(t, cs, "echo", map[string]any{"message": "after the kill"}); !strings.Contains(got, "after the kill") {
		t.Errorf("echo after restart: %q", got)
	}
	cs.Close()
	if out := r.end(); out.Failed || out.Restarts != 1 {
		t.Errorf("outcome %+v", out)
	}
}
