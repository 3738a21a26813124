package main

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// A daemon's server under an approval tier, through `mcpsandbox connect`:
// a host that declared no elicitation gets -31114 whose message names the
// command that approves it, against the lock beside the daemon's config;
// that command, run as written, lets the same call through once, and the
// next session is asked again. A host that declared elicitation is asked
// through connect's bridge, and its answer alone decides.
func TestDaemonApprovalThroughConnect(t *testing.T) {
	requireConfinement(t)
	pol := map[string]any{"mcp": map[string]any{"approve-tools": []string{"echo"}}}
	d := startE2EDaemon(t, claudeConfig(t, exampleEntry(t, "notes", map[string]any{"policy": pol})), nil)
	args := map[string]any{"text": "deploy"}

	h := d.mustConnectGo(t, "notes", "")
	_, _, err := h.call("echo", args)
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != supervisor.CodeApprovalRequired {
		t.Fatalf("echo under the tier: %v, want error %d", err, supervisor.CodeApprovalRequired)
	}
	var data struct {
		ApprovalID string `json:"approvalId"`
	}
	json.Unmarshal(we.Data, &data)
	cmd := regexp.MustCompile("`mcpsandbox (approve [^`]+)`").FindStringSubmatch(we.Message)
	if cmd == nil || !strings.Contains(cmd[1], data.ApprovalID) || !strings.Contains(cmd[1], "--lock "+strings.TrimSuffix(d.config, ".json")+".lock.json") {
		t.Fatalf("-31114 message %q names no `mcpsandbox approve ID --lock` of the daemon's lock (id %q)", we.Message, data.ApprovalID)
	}
	if out, err := cliIn(t, "", d.env, strings.Fields(cmd[1])...); err != nil || !strings.Contains(out, "approved "+data.ApprovalID) {
		t.Fatalf("`mcpsandbox %s` as the message writes it: %v\n%s", cmd[1], err, out)
	}
	if text, isErr, err := h.call("echo", args); err != nil || isErr || text != "deploy" {
		t.Fatalf("the approved call: %q, %v, %v", text, isErr, err)
	}
	if _, _, err := h.call("echo", args); !errors.As(err, &we) || we.Code != supervisor.CodeApprovalRequired {
		t.Errorf("the same call again after its one approval: %v, want %d", err, supervisor.CodeApprovalRequired)
	}
	h.Close()

	asked := make(chan string, 4)
	answer := func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked <- req.Params.Message
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "deny"}}, nil
	}
	h2, err := d.connectGoWith(t, "notes", "", &mcp.ClientOptions{ElicitationHandler: answer})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	if _, _, err := h2.call("echo", args); !errors.As(err, &we) || we.Code != supervisor.CodeApprovalDenied {
		t.Errorf("echo denied by the person: %v, want %d", err, supervisor.CodeApprovalDenied)
	}
	select {
	case q := <-asked:
		if !strings.HasPrefix(q, "mcpsandbox asks: ") || !strings.Contains(q, `"echo"`) || !strings.Contains(q, "deploy") {
			t.Errorf("the question through connect: %q", q)
		}
	default:
		t.Error("the host that declared elicitation was never asked")
	}
}
