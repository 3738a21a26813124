package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// tsApprovalStep is one line testdata/tsclient/approval.mjs prints.
type tsApprovalStep struct {
	Name    string `json:"name"`
	Text    string `json:"text"`
	Code    int    `json:"code"`
	Data    struct{ Kind, Reason string }
	Asked   int  `json:"asked"`
	Ours    bool `json:"ours"`
	Written bool `json:"written"`
}

// runTSApproval runs approval.mjs as the host of `mcpsandbox run` of the
// real server-filesystem serving dir (its built-in holds write_file for
// approval) under b's state dir and lock, each step writing its own file.
func runTSApproval(t *testing.T, b *stateBase, dir string, answers ...string) []tsApprovalStep {
	t.Helper()
	var steps []map[string]any
	for i, a := range answers {
		file := filepath.Join(dir, a+string(rune('a'+i))+".txt")
		steps = append(steps, map[string]any{"name": a, "answer": a, "file": file, "arguments": map[string]any{"path": file, "content": a}})
	}
	return runApprovalPlan(t, b, map[string]any{
		"sdk": tsSDKDir(t), "command": self(t), "tool": "write_file", "steps": steps,
		"args": []string{asCLI, "run", "--approval-timeout", "3s", // the "never" step waits it out; the others answer at once, well within it
			"--", "node", testenv.NPMServer(t, "server-filesystem"), dir},
	})
}

// runApprovalPlan runs approval.mjs on plan, one result per step.
func runApprovalPlan(t *testing.T, b *stateBase, planned map[string]any) []tsApprovalStep {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed (scripts/test-setup.sh installs it): the TypeScript SDK client runs in it")
	}
	plan, _ := json.Marshal(planned)
	answers := planned["steps"].([]map[string]any)
	ctx, cancel := context.WithTimeout(t.Context(), testenv.Wait(time.Minute))
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(testenv.RepoRoot(t), "testdata", "tsclient", "approval.mjs"), string(plan))
	cmd.Stderr, cmd.Env = testenv.NewLogCapture(t), b.env // approval.mjs hands mcpsandbox the test's state dir and lock
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("approval.mjs: %v\n%s", err, out)
	}
	var got []tsApprovalStep
	for line := range bytes.Lines(out) {
		var s tsApprovalStep
		if err := json.Unmarshal(line, &s); err != nil {
			t.Fatalf("approval.mjs printed %q: %v", line, err)
		}
		got = append(got, s)
	}
	if len(got) != len(answers) {
		t.Fatalf("approval.mjs printed %d steps, want %d", len(got), len(answers))
	}
	return got
}

// The TypeScript SDK's v2 client (pinned), pinned to a 2026-07-28
// session, on the Go SDK example server (which speaks it) with echo in a
// tier: mcpsandbox answers the call with its question in an input_required
// result, the client asks its handler and retries; only an allow gets the
// server's answer, and "allow for this session" is not asked again.
func TestApprovalThroughTheTypeScriptSDKv2In20260728(t *testing.T) {
	requireConfinement(t)
	v2 := filepath.Join(filepath.Dir(tsSDKDir(t)), "client")
	b := newStateBase(t)
	var steps []map[string]any
	for _, a := range []string{"decline", "cancel", "malformed", "allow-once", "allow-session", "deny"} {
		steps = append(steps, map[string]any{"name": a, "answer": a, "arguments": map[string]any{"text": "from " + a}})
	}
	got := runApprovalPlan(t, b, map[string]any{
		"v2": v2, "command": self(t), "tool": "echo", "steps": steps,
		"args": []string{asCLI, "run", "--approve-tool", "echo", "--", self(t), asExampleServer},
	})
	want := []struct {
		reason string // "" for the server's answer
		asked  int
	}{{"declined", 1}, {"cancelled", 1}, {"malformed", 1}, {"", 1}, {"", 1}, {"", 0}}
	for i, s := range got {
		w := want[i]
		switch {
		case !s.Ours:
			t.Errorf("%s: a question did not begin \"mcpsandbox asks:\" or lacked its _meta key", s.Name)
		case s.Asked != w.asked:
			t.Errorf("%s: asked %d times, want %d", s.Name, s.Asked, w.asked)
		case w.reason == "" && (s.Code != 0 || s.Text != "from "+s.Name):
			t.Errorf("%s: %+v, want the server's echo", s.Name, s)
		case w.reason != "" && (s.Code != supervisor.CodeApprovalDenied || s.Data.Reason != w.reason || s.Text != ""):
			t.Errorf("%s: %+v, want refused %d (%s)", s.Name, s, supervisor.CodeApprovalDenied, w.reason)
		}
	}
}

// The TypeScript SDK client (pinned) as a classic host that declares
// elicitation, on the real server-filesystem: mcpsandbox asks it in its
// own name before write_file; only an allow writes; decline, cancel, an
// answer outside the form and a question never answered refuse the call
// (-31115 with the reason) and nothing is written; "allow for this
// session" is not asked again in that session, and is in the next one.
func TestApprovalThroughTheTypeScriptSDKClient(t *testing.T) {
	requireConfinement(t)
	dir := sandboxDir(t, "mcpsandbox-approval-ts-")
	b := newStateBase(t)
	got := runTSApproval(t, b, dir, "decline", "cancel", "malformed", "never", "allow-once", "allow-session", "deny")
	want := []struct {
		reason string // "" for written
		asked  int
	}{{"declined", 1}, {"cancelled", 1}, {"malformed", 1}, {"timeout", 1}, {"", 1}, {"", 1}, {"", 0}}
	for i, s := range got {
		w := want[i]
		if !s.Ours {
			t.Errorf("%s: a question did not begin \"mcpsandbox asks:\" or lacked its _meta key", s.Name)
		}
		switch {
		case s.Asked != w.asked:
			t.Errorf("%s: asked %d times, want %d", s.Name, s.Asked, w.asked)
		case w.reason == "" && (!s.Written || s.Code != 0):
			t.Errorf("%s: %+v, want the file written", s.Name, s)
		case w.reason != "" && (s.Written || s.Code != supervisor.CodeApprovalDenied || s.Data.Reason != w.reason):
			t.Errorf("%s: %+v, want refused %d (%s), nothing written", s.Name, s, supervisor.CodeApprovalDenied, w.reason)
		}
	}
	next := runTSApproval(t, b, dir, "deny")[0]
	if next.Asked != 1 || next.Written || next.Data.Reason != "declined" {
		t.Errorf("the next session, after allow-session in another: %+v, want asked and refused", next)
	}
}
