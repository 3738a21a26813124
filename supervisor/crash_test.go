package supervisor_test

//lint:file-ignore SA1019 the relay must carry roots, sampling and logging, which the SDK marks deprecated for the stateless protocol

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// A crash in the middle of a call: every request in flight gets exactly one
// answer, the documented crash error, and the session goes on with a new
// server process without the host doing anything.
func TestCrashMidCallAnswersEachRequestOnceAndSessionContinues(t *testing.T) {
	r := startRelay(t, testPolicy(exampleCommand(t)))
	h := r.rawHost()
	h.initialize("2025-06-18")
	first := h.call(`1`, "tools/call", `{"name":"instance","arguments":{}}`)

	// A slow call is in flight when another call crashes the server.
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}`)
	h.send(`{"jsonrpc":"2.0","id":"crash-3","method":"tools/call","params":{"name":"crash","arguments":{"code":3}}}`)
	for _, id := range []string{`2`, `"crash-3"`} {
		resp := h.response(id)
		if code := errorCode(resp); code != supervisor.CodeServerCrashed {
			t.Fatalf("request %s: got %s, want error %d", id, resp["error"], supervisor.CodeServerCrashed)
		}
		var e struct {
			Message string
			Data    struct{ Reason string }
		}
		json.Unmarshal(resp["error"], &e)
		if !strings.Contains(e.Message, "restarting") || e.Data.Reason != "exited with status 3" {
			t.Errorf("request %s: error %s should say the server is restarting and why (exited with status 3)", id, resp["error"])
		}
	}
	ex := r.waitEvent(supervisor.EventExited)
	if ex.Generation != 1 || ex.Reason != "exited with status 3" {
		t.Errorf("exit event %+v", ex)
	}
	r.waitEvent(supervisor.EventReady)

	// Same session, new process: no new initialize from the host.
	second := h.call(`4`, "tools/call", `{"name":"instance","arguments":{}}`)
	if second["result"] == nil || string(second["result"]) == string(first["result"]) {
		t.Fatalf("after the crash: %s (before: %s); want a result from a new process", second["result"], first["result"])
	}
	if echo := h.call(`5`, "tools/call", `{"name":"echo","arguments":{"text":"still here"}}`); !strings.Contains(string(echo["result"]), "still here") {
		t.Errorf("echo after restart: %s", echo)
	}
	if out := r.end(); out.Failed || out.Restarts != 1 {
		t.Errorf("outcome %+v, want exit 0 and 1 restart", out)
	}
	h.checkOneAnswerEach()
}

// The Go SDK host sees the crash as one error and keeps using its session:
// log level, resource subscription and list_changed carry over to the new
// process.
func TestCrashSDKHostKeepsSessionStateAcrossRestart(t *testing.T) {
	r := startRelay(t, testPolicy(exampleCommand(t)))
	logs := make(chan string, 16)
	updates := make(chan string, 16)
	toolsChanged := make(chan struct{}, 16)
	cs := r.sdkClient("2025-11-25", &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			logs <- req.Params.Data.(string)
		},
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			updates <- req.Params.URI
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { toolsChanged <- struct{}{} },
	})
	ctx := context.Background()
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "example://counter"}); err != nil {
		t.Fatal(err)
	}
	before := mustCallTool(t, cs, "instance", nil)

	_, err := callTool(t, cs, "crash", map[string]any{"code": 7})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != supervisor.CodeServerCrashed {
		t.Fatalf("crash call: %v, want JSON-RPC error %d", err, supervisor.CodeServerCrashed)
	}
	r.waitEvent(supervisor.EventReady)
	select {
	case <-toolsChanged:
	case <-time.After(waitLimit):
		t.Error("no notifications/tools/list_changed after the restart (the server declares tools.listChanged)")
	}

	if after := mustCallTool(t, cs, "instance", nil); after == before {
		t.Fatalf("instance %s unchanged: the server was not restarted", after)
	}
	mustCallTool(t, cs, "log", map[string]any{"text": "after restart"})
	select {
	case got := <-logs:
		if got != "after restart" {
			t.Errorf("log message %q", got)
		}
	case <-time.After(waitLimit):
		t.Error("no log message: logging/setLevel was not replayed onto the new process")
	}
	mustCallTool(t, cs, "touch", nil)
	select {
	case uri := <-updates:
		if uri != "example://counter" {
			t.Errorf("update for %s", uri)
		}
	case <-time.After(waitLimit):
		t.Error("no resource update: resources/subscribe was not replayed onto the new process")
	}
	cs.Close()
	if out := r.end(); out.Failed {
		t.Errorf("outcome %+v", out)
	}
}

// A crash loop stops after --max-restarts within --restart-window; from then
// on every request gets an error that says why, pings still get {}, and the
// server's last stderr lines are in the log. mcpsandbox stays until the host
// leaves and then exits non-zero.
func TestCrashLoopStopsAndErrorsNameWhy(t *testing.T) {
	pol := testPolicy([]string{"sh", "-c", "echo 'fatal: config file missing' >&2; exit 3"})
	pol.MaxRestarts = 2
	r := startRelay(t, pol)
	h := r.rawHost()
	h.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	stopped := r.waitEvent(supervisor.EventStopped)
	if !strings.Contains(stopped.Reason, "crash loop") || !strings.Contains(stopped.Reason, "exited with status 3") {
		t.Errorf("stop reason %q should name the crash loop and the exit", stopped.Reason)
	}
	init := h.response(`0`)
	if code := errorCode(init); code != supervisor.CodeServerCrashed && code != supervisor.CodeServerStopped {
		t.Errorf("initialize: %s", init)
	}
	resp := h.call(`1`, "tools/list", `{}`)
	if errorCode(resp) != supervisor.CodeServerStopped || !strings.Contains(string(resp["error"]), "crash loop") {
		t.Errorf("tools/list after the crash loop: %s", resp)
	}
	if ping := h.call(`2`, "ping", `{}`); string(ping["result"]) != "{}" {
		t.Errorf("ping while down: %s, want {}", ping)
	}
	out := r.end()
	if !out.Failed || !strings.Contains(out.Reason, "crash loop") {
		t.Errorf("outcome %+v, want non-zero and the crash loop named", out)
	}
	if logs := r.logs.String(); !strings.Contains(logs, "fatal: config file missing") {
		t.Error("the server's last stderr lines are not in the log")
	}
	h.checkOneAnswerEach()
}

// With --restart never a crash leaves the server down, with errors that say
// so; a clean exit under on-failure ends the session with status 0.
func TestRestartPolicies(t *testing.T) {
	t.Run("never", func(t *testing.T) {
		pol := testPolicy(exampleCommand(t))
		pol.Restart = "never"
		r := startRelay(t, pol)
		h := r.rawHost()
		h.initialize("2025-06-18")
		if resp := h.call(`1`, "tools/call", `{"name":"crash","arguments":{"code":2}}`); errorCode(resp) != supervisor.CodeServerStopped {
			t.Errorf("crash call under --restart never: %s", resp)
		}
		if resp := h.call(`2`, "tools/list", `{}`); !strings.Contains(string(resp["error"]), "Restart never") {
			t.Errorf("later request: %s", resp)
		}
		if out := r.end(); !out.Failed {
			t.Errorf("outcome %+v, want non-zero", out)
		}
	})
	t.Run("on-failure-clean-exit", func(t *testing.T) {
		r := startRelay(t, testPolicy(exampleCommand(t)))
		h := r.rawHost()
		h.initialize("2025-06-18")
		if resp := h.call(`1`, "tools/call", `{"name":"crash","arguments":{"code":0}}`); errorCode(resp) != supervisor.CodeServerStopped {
			t.Errorf("call during a clean exit: %s", resp)
		}
		out := r.wait()
		if out.Failed || !strings.Contains(out.Reason, "exited by itself") {
			t.Errorf("outcome %+v", out)
		}
	})
	t.Run("always-restarts-clean-exit", func(t *testing.T) {
		pol := testPolicy(exampleCommand(t))
		pol.Restart = "always"
		r := startRelay(t, pol)
		h := r.rawHost()
		h.initialize("2025-06-18")
		h.call(`1`, "tools/call", `{"name":"crash","arguments":{"code":0}}`)
		r.waitEvent(supervisor.EventReady)
		if resp := h.call(`2`, "tools/call", `{"name":"echo","arguments":{"text":"x"}}`); resp["result"] == nil {
			t.Errorf("after restart: %s", resp)
		}
		r.end()
	})
}

// The host leaving while the server waits to be restarted ends everything
// promptly and cleanly.
func TestHostEOFDuringRestart(t *testing.T) {
	pol := testPolicy(exampleCommand(t))
	pol.RestartBackoff.Min, pol.RestartBackoff.Max = time.Hour, time.Hour
	r := startRelay(t, pol)
	h := r.rawHost()
	h.initialize("2025-06-18")
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"crash","arguments":{"code":1}}}`)
	h.response(`1`)
	r.waitEvent(supervisor.EventExited)
	// Queued during the restart, then the host leaves.
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if ping := h.call(`3`, "ping", `{}`); string(ping["result"]) != "{}" {
		t.Errorf("host ping during the restart: %s, want {} from mcpsandbox", ping)
	}
	out := r.end()
	if out.Failed || !strings.Contains(out.Reason, "restarting") {
		t.Errorf("outcome %+v, want exit 0 and the restart named", out)
	}
}

// When the server cannot even be started again (its executable vanished),
// each failed start counts towards the crash loop; requests held meanwhile
// are answered once, when mcpsandbox gives up, with the reason.
func TestRestartThatCannotStart(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o755) // the sandbox's user must reach the executable
	exe := filepath.Join(dir, "server")
	self, _ := os.Executable()
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	pol := testPolicy([]string{exe, roleExampleServer})
	pol.MaxRestarts = 2
	r := startRelay(t, pol)
	h := r.rawHost()
	h.initialize("2025-06-18")
	os.Remove(exe)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"crash","arguments":{"code":1}}}`)
	if resp := h.response(`1`); errorCode(resp) != supervisor.CodeServerCrashed {
		t.Errorf("crash call: %s", resp)
	}
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`) // held, then failed once
	stopped := r.waitEvent(supervisor.EventStopped)
	if !strings.Contains(stopped.Reason, "restart failed") {
		t.Errorf("stop reason %q should say the restart failed", stopped.Reason)
	}
	if resp := h.response(`2`); errorCode(resp) != supervisor.CodeServerStopped || !strings.Contains(string(resp["error"]), "restart failed") {
		t.Errorf("held request: %s", resp)
	}
	if out := r.end(); !out.Failed {
		t.Errorf("outcome %+v, want non-zero", out)
	}
	h.checkOneAnswerEach()
}
