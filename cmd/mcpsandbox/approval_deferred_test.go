package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// heldCall is what the host got for a call an approval tier holds.
type heldCall struct {
	Code       int64
	Message    string
	Kind       string    `json:"kind"`
	ApprovalID string    `json:"approvalId"`
	Expires    time.Time `json:"expires"`
	Reason     string    `json:"reason"`
}

func (m *mcpsandbox) held(t *testing.T, tool string, args map[string]any) heldCall {
	t.Helper()
	res, err := m.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	we, ok := rpcError(err)
	if !ok {
		t.Fatalf("%s %v: answered %+v, %v; want it held", tool, args, res, err)
	}
	h := heldCall{Code: we.Code, Message: we.Message}
	json.Unmarshal(we.Data, &h)
	return h
}

// The deferred path through the binary, on the real server-filesystem
// under its built-in tier and a host (the Go SDK client) that declares no
// elicitation: an approval lets exactly that call through once; the same
// id does not cover other arguments; one approved but not used before it
// expires is refused, and nothing was written but the approved call.
func TestDeferredApprovalThroughTheBinary(t *testing.T) {
	requireConfinement(t)
	entry := testenv.NPMServer(t, "server-filesystem")
	b := newStateBase(t)
	dir := sandboxDir(t, "mcpsandbox-approval-fs-")
	// --approval-timeout: how long an approval waits. Each approval must be
	// used before it: room for a race-built approve and call on a busy machine.
	const life = 5 * time.Second
	s := b.mustStart(t, "--approval-timeout", life.String(), "--", "node", entry, dir)
	approve := func(id string) {
		t.Helper()
		if out, err := cliIn(t, s.cmd.Dir, s.cmd.Env, "approve", id); err != nil {
			t.Fatalf("mcpsandbox approve %s: %v\n%s", id, err, out)
		}
	}
	file := filepath.Join(dir, "a.txt")
	mine := map[string]any{"path": file, "content": "mine"}
	first := s.held(t, "write_file", mine)
	if first.Code != supervisor.CodeApprovalRequired || first.ApprovalID == "" {
		t.Fatalf("write_file: %+v, want approval-required with an id", first)
	}
	if want := docsDeferredMessage(t, first.ApprovalID, first.Expires); first.Message != want {
		t.Errorf("the host was told\n%s\ndocs/approval.md shows\n%s", first.Message, want)
	}
	approve(first.ApprovalID)
	other := s.held(t, "write_file", map[string]any{"path": file, "content": "another's"})
	if other.Code != supervisor.CodeApprovalRequired || other.ApprovalID == first.ApprovalID {
		t.Errorf("other arguments after approving %s: %+v, want held under another id", first.ApprovalID, other)
	}
	if got, failed := s.callResult(t, "write_file", mine); failed {
		t.Fatalf("the approved call: %s", got)
	}
	if data, _ := os.ReadFile(file); string(data) != "mine" {
		t.Errorf("the approved call wrote %q", data)
	}
	os.Remove(file)
	again := s.held(t, "write_file", mine)
	if again.Code != supervisor.CodeApprovalRequired || again.ApprovalID == first.ApprovalID {
		t.Errorf("a second call on one approval: %+v, want held anew", again)
	}
	approve(again.ApprovalID)
	time.Sleep(time.Until(again.Expires) + 50*time.Millisecond) // the approval's own clock: nothing to wait on
	expired := s.held(t, "write_file", mine)
	if expired.Code != supervisor.CodeApprovalDenied || expired.Reason != "expired" {
		t.Errorf("after the approval expired: %+v, want approval-denied (expired)", expired)
	}
	if _, err := os.Stat(file); err == nil {
		t.Error("a call whose approval expired wrote the file")
	}
}

// docsDeferredMessage is the -31114 message docs/approval.md shows, with
// its id and expiry those of the call.
func docsDeferredMessage(t *testing.T, id string, expires time.Time) string {
	t.Helper()
	msg := testenv.DocString(t, "docs/approval.md", `(?m)^ "message": ("mcpsandbox: tool .*"),$`)
	return strings.NewReplacer("k3v7qd2mxa", id, "2026-12-05T10:02:00Z", expires.UTC().Format(time.RFC3339)).Replace(msg)
}
