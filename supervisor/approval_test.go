package supervisor_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/demo"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// person answers mcpsandbox's question as a test says, and counts the
// questions it was asked.
type person struct {
	t      *testing.T
	asked  atomic.Int32
	answer atomic.Pointer[func(context.Context) (*mcp.ElicitResult, error)]
}

func (p *person) says(f func(context.Context) (*mcp.ElicitResult, error)) { p.answer.Store(&f) }

func (p *person) decides(decision string) {
	p.says(func(context.Context) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": decision}}, nil
	})
}

func (p *person) handler(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	p.asked.Add(1)
	msg := req.Params.Message
	if !strings.HasPrefix(msg, "mcpsandbox asks:") || !strings.Contains(msg, `"touch"`) || req.Params.Meta["io.github.mcpsandbox/approval"] == nil {
		p.t.Errorf("the question does not read as mcpsandbox's: %q %v", msg, req.Params.Meta)
	}
	return (*p.answer.Load())(ctx)
}

// approvalRelay supervises the example server with touch in an approval
// tier and a host (the Go SDK client) that answers through p.
func approvalRelay(t *testing.T, version string, p *person, timeout time.Duration) (*relay, *mcp.ClientSession, string) {
	pol := testPolicy(exampleCommand(t))
	pol.ApproveTools, pol.ApprovalTimeout = []string{"touch"}, timeout
	pol.AuditLog = filepath.Join(t.TempDir(), "audit.jsonl")
	r := startRelay(t, pol, func(o *supervisor.Options) { o.Lock = filepath.Join(t.TempDir(), "lock.json") })
	return r, r.sdkClient(version, &mcp.ClientOptions{ElicitationHandler: p.handler}), pol.AuditLog
}

// counter is how many touch calls reached the server.
func counter(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	rr, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: demo.ExampleResource})
	if err != nil {
		t.Fatal(err)
	}
	return rr.Contents[0].Text
}

func wantApprovalDenied(t *testing.T, err error, reason string) {
	t.Helper()
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != supervisor.CodeApprovalDenied {
		t.Errorf("want approval-denied (%d), got %v", supervisor.CodeApprovalDenied, err)
		return
	}
	var data struct{ Reason string }
	json.Unmarshal(werr.Data, &data)
	if data.Reason != reason {
		t.Errorf("data.reason %q, want %q (%s)", data.Reason, reason, werr.Data)
	}
}

// The official Go SDK client, in a classic session (mcpsandbox's own
// elicitation/create) and in a 2026-07-28 one (an input_required result
// the client answers and retries): accept relays the call once; decline,
// cancel, a malformed answer and a person who never answers refuse it and
// it never reaches the server; "allow for this session" holds for that
// session only; the audit line records each decision.
func TestApprovalThroughTheGoSDKClient(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			const timeout = 1500 * time.Millisecond
			p := &person{t: t}
			r, cs, auditLog := approvalRelay(t, version, p, timeout)
			p.decides("allow-once")
			if got := mustCallTool(t, cs, "touch", nil); got != "counter 1" {
				t.Errorf("allowed once: %q", got)
			}
			for _, c := range []struct {
				reason string
				answer func(context.Context) (*mcp.ElicitResult, error)
			}{
				{"declined", func(context.Context) (*mcp.ElicitResult, error) { return &mcp.ElicitResult{Action: "decline"}, nil }},
				{"cancelled", func(context.Context) (*mcp.ElicitResult, error) { return &mcp.ElicitResult{Action: "cancel"}, nil }},
				{"malformed", func(context.Context) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"note": "sure"}}, nil
				}},
			} {
				reason, answer := c.reason, c.answer
				p.says(answer)
				_, err := callTool(t, cs, "touch", nil)
				if reason == "malformed" && version == "2026-07-28" {
					// The SDK checks the answer against the form itself and
					// never retries (a malformed retry: TestMalformedRetry).
					if err == nil {
						t.Error("a malformed answer: the call went through")
					}
					continue
				}
				wantApprovalDenied(t, err, reason)
			}
			if version == "2025-11-25" {
				// mcpsandbox stops waiting at --approval-timeout.
				p.says(func(ctx context.Context) (*mcp.ElicitResult, error) { <-ctx.Done(); return nil, ctx.Err() })
				_, err := callTool(t, cs, "touch", nil)
				wantApprovalDenied(t, err, "timeout")
			} else {
				// The answer comes after the signed requestState expired.
				p.says(func(ctx context.Context) (*mcp.ElicitResult, error) {
					select {
					case <-time.After(timeout + 200*time.Millisecond):
					case <-ctx.Done():
					}
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow-once"}}, nil
				})
				_, err := callTool(t, cs, "touch", nil)
				wantApprovalDenied(t, err, "expired")
			}
			if got := counter(t, cs); got != "1" {
				t.Errorf("after the refusals the server was touched %s times, want 1", got)
			}
			p.decides("allow-session")
			asked := p.asked.Load()
			mustCallTool(t, cs, "touch", nil)
			if got := mustCallTool(t, cs, "touch", nil); got != "counter 3" || p.asked.Load() != asked+1 {
				t.Errorf("allowed for the session: %q after %d questions, want counter 3 after 1", got, p.asked.Load()-asked)
			}
			mustCallTool(t, cs, "echo", map[string]any{"text": "untiered"})
			cs.Close()
			r.end()
			decisions := approvalDecisions(t, auditLog)
			malformed := map[string]string{"2025-11-25": "malformed ", "2026-07-28": ""}[version]
			want := "allow-once declined cancelled " + malformed + map[string]string{"2025-11-25": "timeout", "2026-07-28": "expired"}[version] + " allow-session session"
			if got := strings.Join(decisions, " "); !strings.Contains(got, want) {
				t.Errorf("audit approvals %q, want %q", got, want)
			}

			other := &person{t: t}
			other.decides("deny")
			_, cs2, _ := approvalRelay(t, version, other, timeout)
			_, err := callTool(t, cs2, "touch", nil)
			wantApprovalDenied(t, err, "declined")
			if other.asked.Load() != 1 {
				t.Errorf("another session was asked %d times, want once", other.asked.Load())
			}
		})
	}
}

// approvalDecisions reads the approval of each tools/call audit line: its
// decision ("session" for a call an earlier "for this session" allowed),
// or its outcome's reason word when the audit line has none.
func approvalDecisions(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var a struct {
			Tool     string `json:"tool"`
			Approval *struct {
				Channel  string `json:"channel"`
				Decision string `json:"decision"`
			} `json:"approval"`
		}
		json.Unmarshal([]byte(l), &a)
		switch {
		case a.Tool != "touch" || a.Approval != nil && a.Approval.Decision == "required":
		case a.Approval == nil:
			out = append(out, "none")
		case a.Approval.Channel == "session":
			out = append(out, "session")
		default:
			out = append(out, strings.NewReplacer("deny", "declined", "cancel", "cancelled").Replace(a.Approval.Decision))
		}
	}
	return out
}

// A 2026-07-28 host that retries with an answer outside the form, with
// other arguments, or twice with the same signed state, is refused, and
// the server never sees the call.
func TestApprovalRetryThatDoesNotHold(t *testing.T) {
	pol := testPolicy(exampleCommand(t))
	pol.ApproveTools = []string{"touch"}
	r := startRelay(t, pol)
	h := r.rawHost()
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	call := func(id, args, extra string) map[string]json.RawMessage {
		return h.call(id, "tools/call", `{"name":"touch","arguments":`+args+`,`+meta+extra+`}`)
	}
	asked := func(id string) string {
		var res struct {
			ResultType   string `json:"resultType"`
			RequestState string `json:"requestState"`
		}
		json.Unmarshal(call(id, `{}`, "")["result"], &res)
		if res.ResultType != "input_required" || res.RequestState == "" {
			t.Fatalf("want mcpsandbox's question, got %+v", res)
		}
		return res.RequestState
	}
	answer := func(state, decision string) string {
		return `,"requestState":"` + state + `","inputResponses":{"io.github.mcpsandbox/approval":{"action":"accept","content":{"decision":` + decision + `}}}`
	}
	refusedAs := func(m map[string]json.RawMessage, reason string) {
		t.Helper()
		var e struct {
			Code int `json:"code"`
			Data struct{ Reason string }
		}
		json.Unmarshal(m["error"], &e)
		if e.Code != supervisor.CodeApprovalDenied || e.Data.Reason != reason {
			t.Errorf("want approval-denied (%s), got %s%s", reason, m["error"], m["result"])
		}
	}
	refusedAs(call("2", `{}`, answer(asked("1"), `"maybe"`)), "malformed")
	refusedAs(call("4", `{"more":1}`, answer(asked("3"), `"allow-once"`)), "malformed")
	state := asked("5")
	if m := call("6", `{}`, answer(state, `"allow-once"`)); m["result"] == nil {
		t.Fatalf("the allowed retry: %s", m["error"])
	}
	refusedAs(call("7", `{}`, answer(state, `"allow-once"`)), "malformed")
	var rr struct{ Contents []struct{ Text string } }
	json.Unmarshal(h.call("8", "resources/read", `{"uri":"`+demo.ExampleResource+`",`+meta+`}`)["result"], &rr)
	if len(rr.Contents) != 1 || rr.Contents[0].Text != "1" {
		t.Errorf("the server was touched %+v times, want once", rr)
	}
}

// A classic host that goes away while mcpsandbox's question is open: the
// call is denied (host-gone) and never reaches the server, as its audit
// line shows.
func TestApprovalHostGoneWhileAsked(t *testing.T) {
	pol := testPolicy(exampleCommand(t))
	pol.ApproveTools = []string{"touch"}
	pol.AuditLog = filepath.Join(t.TempDir(), "audit.jsonl")
	r := startRelay(t, pol)
	h := r.rawHost()
	h.call(`0`, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}`)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"touch","arguments":{}}}`)
	ask := h.next("mcpsandbox's question", func(m map[string]json.RawMessage) bool {
		return string(m["method"]) == `"elicitation/create"`
	})
	if !strings.HasPrefix(string(ask["id"]), `"mcpsandbox:ask:`) {
		t.Errorf("the question's id %s is not in mcpsandbox's namespace", ask["id"])
	}
	r.toRelay.Close()
	r.wait()
	var line struct {
		Outcome  string
		Approval struct{ Channel, Decision string }
	}
	data, _ := os.ReadFile(pol.AuditLog)
	json.Unmarshal(data, &line) // the only tools/call line: initialize is not audited
	if line.Approval.Decision != "host-gone" || line.Outcome == "ok" {
		t.Errorf("audit after the host went away while asked: %s", data)
	}
}
