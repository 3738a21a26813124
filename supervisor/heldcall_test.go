package supervisor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	sbjsonrpc "github.com/mcpsandbox/mcpsandbox/jsonrpc"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
	"github.com/mcpsandbox/mcpsandbox/supervisor/mcprules"
)

// heldRule is the tests' rule at the seam: a tools/call of its tool is
// answered by mcpsandbox (answer) or held (decide), as an approval rule
// does; other requests pass.
type heldRule struct {
	tool     string // held, and any call whose _meta says "hold"
	answer   []byte
	refusals map[string]*mcprules.Refusal // by tool: refused at arrival
	decide   func(ctx context.Context, host mcprules.Host) mcprules.Decision
	entered  chan struct{} // a Decide began
	ctxDone  chan error    // a Decide saw its ctx end: ctx.Err()
}

func newHeldRule(tool string) *heldRule {
	return &heldRule{tool: tool, entered: make(chan struct{}, 8), ctxDone: make(chan error, 8)}
}

func (h *heldRule) HostRequest(msg []byte, e *sbjsonrpc.Envelope) (mcprules.Verdict, mcprules.Call) {
	var p struct {
		Name string
		Meta struct{ Hold bool } `json:"_meta"`
	}
	if !e.MethodIs("tools/call") || json.Unmarshal(e.Params, &p) != nil {
		return mcprules.Verdict{}, nil
	}
	if ref := h.refusals[p.Name]; ref != nil {
		return mcprules.Verdict{Refusal: ref}, nil
	}
	if p.Name != h.tool && !p.Meta.Hold {
		return mcprules.Verdict{}, nil
	}
	if h.answer != nil {
		return mcprules.Verdict{Answer: h.answer, Approval: &mcprules.Approval{Channel: "input-required", Decision: "required"}}, nil
	}
	return mcprules.Verdict{Pending: heldDecide{h}}, nil
}

func (h *heldRule) ServerNotification([]byte, *sbjsonrpc.Envelope) bool { return true }

type heldDecide struct{ h *heldRule }

func (d heldDecide) Decide(ctx context.Context, host mcprules.Host) mcprules.Decision {
	d.h.entered <- struct{}{}
	dec := d.h.decide(ctx, host)
	if ctx.Err() != nil {
		d.h.ctxDone <- ctx.Err()
	}
	return dec
}

// askPerson is a Decide that asks the host's user through elicitation/create
// and relays the call only on "allow".
func askPerson(ctx context.Context, host mcprules.Host) mcprules.Decision {
	asked := time.Now()
	res, err := host.Request(ctx, "elicitation/create", []byte(`{"message":"mcpsandbox asks: may the server run write_file?",`+
		`"requestedSchema":{"type":"object","properties":{"decision":{"type":"string","enum":["allow","deny"]}},"required":["decision"]}}`))
	deny := func(reason string) mcprules.Decision {
		return mcprules.Decision{
			Refusal:  &mcprules.Refusal{Kind: mcprules.ApprovalDenied, Reason: reason, Message: "tools/call write_file was not approved: " + reason},
			Approval: &mcprules.Approval{Channel: "elicitation", Decision: "deny", Waited: time.Since(asked)},
		}
	}
	if err != nil {
		return deny("host-gone")
	}
	var r struct {
		Action  string
		Content struct{ Decision string }
	}
	if json.Unmarshal(res, &r) != nil || r.Action != "accept" || r.Content.Decision != "allow" {
		return deny("declined")
	}
	return mcprules.Decision{Approval: &mcprules.Approval{Channel: "elicitation", Decision: "allow-once", Waited: time.Since(asked)}}
}

// auditTap collects the session's audit lines.
type auditTap struct {
	mu      sync.Mutex
	lines   []string
	written chan struct{} // a line was tapped
}

func newAuditTap() *auditTap { return &auditTap{written: make(chan struct{}, 1)} }

func (a *auditTap) tap(line []byte) {
	a.mu.Lock()
	a.lines = append(a.lines, string(line))
	a.mu.Unlock()
	select {
	case a.written <- struct{}{}:
	default:
	}
}

// line returns the audit line of the tools/call of tool, once written.
func (a *auditTap) line(t *testing.T, tool string) map[string]any {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		a.mu.Lock()
		for _, l := range a.lines {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m["tool"] == tool {
				a.mu.Unlock()
				return m
			}
		}
		a.mu.Unlock()
		select {
		case <-a.written:
		case <-deadline:
			t.Fatalf("no audit line for tools/call %s", tool)
		}
	}
}

// startHeld starts the rules server behind rule, its audit lines tapped.
func startHeld(t *testing.T, rule *heldRule, callTimeout time.Duration) (*relay, *auditTap) {
	pol := testPolicy(rulesServer(t))
	pol.CallTimeout = callTimeout
	tap := newAuditTap()
	r := startRelay(t, pol, supervisor.WithRules(rule), func(o *supervisor.Options) { o.AuditTap = tap.tap })
	return r, tap
}

// elicitHost is a Go SDK host whose user answers mcpsandbox's question
// with decision, counting the questions.
func elicitHost(r *relay, decision string, asked *int) *mcp.ClientSession {
	var mu sync.Mutex
	return r.sdkClient("", &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		*asked++
		mu.Unlock()
		if !strings.HasPrefix(req.Params.Message, "mcpsandbox asks:") {
			return &mcp.ElicitResult{Action: "cancel"}, nil
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": decision}}, nil
	}})
}

// A held call whose Decide asks the host's user, who allows it: the call
// reaches the server once, after the question, and the audit line records
// the decision.
func TestHeldCallAskedThenRelayedOnce(t *testing.T) {
	rule := newHeldRule("write_file")
	rule.decide = askPerson
	r, tap := startHeld(t, rule, 0)
	asked := 0
	cs := elicitHost(r, "allow", &asked)
	if got := mustCallTool(t, cs, "write_file", nil); got != "write_file" {
		t.Errorf("approved call: %q, want the server's answer", got)
	}
	if asked != 1 {
		t.Errorf("the user was asked %d times, want 1", asked)
	}
	if got := serverCount(t, cs, "tools/call"); got != "1" {
		t.Errorf("the server got %s tools/call before count, want 1", got)
	}
	line := tap.line(t, "write_file")
	ap, _ := line["approval"].(map[string]any)
	if line["outcome"] != "ok" || ap["channel"] != "elicitation" || ap["decision"] != "allow-once" || ap["waitedMs"] == nil {
		t.Errorf("audit line %v: want outcome ok and approval {channel elicitation, decision allow-once, waitedMs}", line)
	}
	cs.Close()
	r.end()
}

// A held call the user denies: the host gets -31115 approval-denied, the
// server never sees the call, the audit line says so.
func TestHeldCallRefused(t *testing.T) {
	rule := newHeldRule("write_file")
	rule.decide = askPerson
	r, tap := startHeld(t, rule, 0)
	asked := 0
	cs := elicitHost(r, "deny", &asked)
	_, err := callTool(t, cs, "write_file", nil)
	werr := wantRefused(t, "denied call", err, supervisor.CodeApprovalDenied, "not approved")
	var data struct{ Source, Kind, Reason string }
	json.Unmarshal(werr.Data, &data)
	if data.Source != "mcpsandbox" || data.Kind != "approval-denied" || data.Reason != "declined" {
		t.Errorf("data %s: want source mcpsandbox, kind approval-denied, reason declined", werr.Data)
	}
	if got := serverCount(t, cs, "tools/call"); got != "0" {
		t.Errorf("the server got %s tools/call before count, want 0", got)
	}
	line := tap.line(t, "write_file")
	ap, _ := line["approval"].(map[string]any)
	if line["outcome"] != "approval-denied" || line["code"] != float64(supervisor.CodeApprovalDenied) || ap["decision"] != "deny" {
		t.Errorf("audit line %v: want outcome approval-denied, code -31115, decision deny", line)
	}
	cs.Close()
	r.end()
}

// A rule's Answer is the host's result, in mcpsandbox's name: the server
// never sees the call.
func TestRuleAnswers(t *testing.T) {
	rule := newHeldRule("write_file")
	rule.answer = []byte(`{"content":[{"type":"text","text":"mcpsandbox asks first"}]}`)
	r, tap := startHeld(t, rule, 0)
	cs := r.sdkClient("", nil)
	if got := mustCallTool(t, cs, "write_file", nil); got != "mcpsandbox asks first" {
		t.Errorf("answered call: %q, want the rule's answer", got)
	}
	if got := serverCount(t, cs, "tools/call"); got != "0" {
		t.Errorf("the server got %s tools/call before count, want 0", got)
	}
	if ap, _ := tap.line(t, "write_file")["approval"].(map[string]any); ap["channel"] != "input-required" {
		t.Errorf("audit approval %v: want channel input-required", ap)
	}
	cs.Close()
	r.end()
}

// blockUntilDone is a Decide that waits for its ctx to end, then would
// relay the call: it must not be, once its request ended.
func blockUntilDone(ctx context.Context, _ mcprules.Host) mcprules.Decision {
	<-ctx.Done()
	return mcprules.Decision{}
}

// The host cancels a held call: Decide's ctx ends, the call gets no
// answer and never reaches the server, and nothing is answered twice.
func TestHeldCallCancelledByHost(t *testing.T) {
	rule := newHeldRule("write_file")
	rule.decide = blockUntilDone
	r, _ := startHeld(t, rule, 0)
	h := r.rawHost()
	h.initialize("2025-06-18")
	h.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write_file"}}`)
	recv(t, rule.entered, "Decide")
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
	if err := recv(t, rule.ctxDone, "the end of Decide's ctx"); !errors.Is(err, context.Canceled) {
		t.Errorf("Decide's ctx: %v, want cancelled", err)
	}
	resp := h.call(`8`, "tools/call", `{"name":"count","arguments":{"method":"tools/call"}}`)
	if !strings.Contains(string(resp["result"]), `"text":"0"`) {
		t.Errorf("count after the cancelled held call: %s, want 0 calls at the server", resp["result"])
	}
	r.end()
	delete(h.sent, "7") // cancelled: owed no answer
	h.checkOneAnswerEach()
	if n := h.countByID()["7"]; n != 0 {
		t.Errorf("the cancelled call got %d answers, want none", n)
	}
}

// The host leaves while mcpsandbox's own question is unanswered: the
// question fails as host-gone, Decide's ctx ends, and the call is never
// relayed (its audit line says it was not answered ok).
func TestHeldCallHostLeaves(t *testing.T) {
	rule := newHeldRule("write_file")
	askErr := make(chan error, 1)
	rule.decide = func(ctx context.Context, host mcprules.Host) mcprules.Decision {
		_, err := host.Request(ctx, "elicitation/create", []byte(`{"message":"mcpsandbox asks: ok?","requestedSchema":{"type":"object","properties":{}}}`))
		askErr <- err
		return mcprules.Decision{} // would relay: the relay must not
	}
	r, tap := startHeld(t, rule, 0)
	h := r.rawHost()
	h.initialize("2025-06-18")
	h.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write_file"}}`)
	ask := h.next("mcpsandbox's question", func(m map[string]json.RawMessage) bool { return string(m["method"]) == `"elicitation/create"` })
	if !strings.HasPrefix(string(ask["id"]), `"mcpsandbox:ask:`) {
		t.Errorf("mcpsandbox's question has id %s, want one of its ask ids", ask["id"])
	}
	r.end()
	if err := recv(t, askErr, "the question's end"); !errors.Is(err, mcprules.ErrHostGone) && !errors.Is(err, context.Canceled) {
		t.Errorf("the question: %v, want host-gone", err)
	}
	if err := recv(t, rule.ctxDone, "the end of Decide's ctx"); err == nil {
		t.Error("Decide's ctx did not end with the host")
	}
	if line := tap.line(t, "write_file"); line["outcome"] == "ok" {
		t.Errorf("audit line %v: the held call was relayed after its host left", line)
	}
}

// --call-timeout does not run while a call is held: a held call released
// after another call ran into the timeout still reaches the server and is
// answered; once relayed, a held call's clock runs.
func TestHeldCallNotTimedWhileHeld(t *testing.T) {
	release := make(chan struct{})
	rule := newHeldRule("write_file")
	rule.decide = func(context.Context, mcprules.Host) mcprules.Decision {
		<-release
		return mcprules.Decision{}
	}
	r, _ := startHeld(t, rule, 200*time.Millisecond)
	cs := r.sdkClient("", nil)
	held := make(chan string, 1)
	go func() {
		res, err := callTool(t, cs, "write_file", nil)
		if err != nil {
			held <- err.Error()
			return
		}
		held <- toolText(t, res)
	}()
	recv(t, rule.entered, "Decide")
	// A call that is not held runs into the clock: the held one has waited
	// longer than that when it is released.
	_, err := callTool(t, cs, "wait", nil)
	wantRefused(t, "a wait that is not held", err, supervisor.CodeCallTimeout)
	release <- struct{}{}
	if got := recv(t, held, "the held call's answer"); got != "write_file" {
		t.Errorf("held call released after the call timeout: %q, want the server's answer", got)
	}
	// Held, then relayed: the clock starts with the relay.
	go func() { release <- struct{}{} }()
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wait", Meta: mcp.Meta{"hold": true}})
	wantRefused(t, "a held wait, once relayed", err, supervisor.CodeCallTimeout)
	cs.Close()
	r.end()
}

// recv waits for a value on ch, up to waitLimit.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("no %s within %s", what, waitLimit)
	}
	var zero T
	return zero
}

// The new kinds as the host and the audit line see them: a secret in the
// arguments (-31116: where and which format, never the value) and an
// approval to be given with mcpsandbox approve (-31114: the id, its expiry).
func TestApprovalAndSecretRefusals(t *testing.T) {
	expires := time.Date(2026, 12, 5, 6, 0, 0, 0, time.UTC)
	rule := newHeldRule("")
	rule.refusals = map[string]*mcprules.Refusal{
		"write_file": {Kind: mcprules.SecretInArguments, Path: "arguments.content", Secret: "github-token", Message: "arguments.content carries a github-token"},
		"read_file": {Kind: mcprules.ApprovalRequired, ApprovalID: "k3mza7q2xd", Expires: expires, Message: "run: mcpsandbox approve k3mza7q2xd",
			Approval: &mcprules.Approval{Channel: "deferred", Decision: "required", ID: "k3mza7q2xd"}},
	}
	r, tap := startHeld(t, rule, 0)
	cs := r.sdkClient("", nil)
	_, err := callTool(t, cs, "write_file", map[string]any{"content": "ghp_" + strings.Repeat("a", 36)})
	werr := wantRefused(t, "a secret in the arguments", err, supervisor.CodeSecretInArguments, "arguments.content")
	if got := string(werr.Data); !strings.Contains(got, `"kind":"secret-in-arguments"`) || !strings.Contains(got, `"path":"arguments.content"`) ||
		!strings.Contains(got, `"secret":"github-token"`) || strings.Contains(got, "ghp_") {
		t.Errorf("data %s: want kind, path and format, never the value", got)
	}
	_, err = callTool(t, cs, "read_file", nil)
	werr = wantRefused(t, "a call awaiting approval", err, supervisor.CodeApprovalRequired, "mcpsandbox approve k3mza7q2xd")
	if got := string(werr.Data); !strings.Contains(got, `"kind":"approval-required"`) || !strings.Contains(got, `"approvalId":"k3mza7q2xd"`) ||
		!strings.Contains(got, `"expires":"2026-12-05T06:00:00Z"`) {
		t.Errorf("data %s: want kind, approvalId and expires", got)
	}
	if line := tap.line(t, "write_file"); line["outcome"] != "secret-in-arguments" || line["path"] != "arguments.content" || line["secret"] != "github-token" ||
		strings.Contains(fmt.Sprint(line), "ghp_") {
		t.Errorf("audit line %v: want outcome secret-in-arguments, path and secret, never the value", line)
	}
	line := tap.line(t, "read_file")
	ap, _ := line["approval"].(map[string]any)
	if line["outcome"] != "approval-required" || ap["channel"] != "deferred" || ap["decision"] != "required" || ap["id"] != "k3mza7q2xd" {
		t.Errorf("audit line %v: want outcome approval-required, approval {deferred, required, id}", line)
	}
	cs.Close()
	r.end()
}

// mcpsandbox's own questions are bounded: past 64 awaiting the host's
// answer, one more fails at once; when the request ends, the host is told
// each question is cancelled, and a late answer stays on the host's side.
func TestHostQuestionsBounded(t *testing.T) {
	const n = 65
	rule := newHeldRule("write_file")
	errs := make(chan error, n)
	rule.decide = func(ctx context.Context, host mcprules.Host) mcprules.Decision {
		for range n {
			go func() {
				_, err := host.Request(ctx, "elicitation/create", []byte(`{"message":"mcpsandbox asks: ok?"}`))
				errs <- err
			}()
		}
		<-ctx.Done()
		return mcprules.Decision{}
	}
	r, _ := startHeld(t, rule, 0)
	h := r.rawHost()
	h.initialize("2025-06-18")
	h.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write_file"}}`)
	if err := recv(t, errs, "a question refused over the bound"); !errors.Is(err, mcprules.ErrTooManyAsks) {
		t.Fatalf("first question to end: %v, want ErrTooManyAsks", err)
	}
	var ids []string
	for range n - 1 {
		ask := h.next("a question", func(m map[string]json.RawMessage) bool { return string(m["method"]) == `"elicitation/create"` })
		ids = append(ids, string(ask["id"]))
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
	for range n - 1 {
		if err := recv(t, errs, "a question's end"); !errors.Is(err, context.Canceled) {
			t.Errorf("question: %v, want its ctx's end", err)
		}
	}
	for range n - 1 {
		h.next("a question's cancellation", func(m map[string]json.RawMessage) bool {
			return string(m["method"]) == `"notifications/cancelled"` && strings.Contains(string(m["params"]), `"mcpsandbox:ask:`)
		})
	}
	// The host answers one anyway: it is dropped on the host's side.
	h.send(`{"jsonrpc":"2.0","id":` + ids[0] + `,"result":{"action":"accept"}}`)
	r.logs.waitFor(t, "host answered a request that is not pending; dropped")
	resp := h.call(`8`, "tools/call", `{"name":"count","arguments":{"method":"tools/call"}}`)
	if !strings.Contains(string(resp["result"]), `"text":"0"`) {
		t.Errorf("count: %s, want no call at the server", resp["result"])
	}
	r.end()
}

// A server cannot answer mcpsandbox's question to the host: its answer
// under the question's id, written before the host's, is dropped, and the
// host's own answer (decline) decides.
func TestServerCannotAnswerHostQuestion(t *testing.T) {
	rule := newHeldRule("echo")
	rule.decide = askPerson
	pol := testPolicy(exampleCommand(t))
	r := startRelay(t, pol, supervisor.WithRules(rule))
	h := r.rawHost()
	h.initialize("2025-06-18")
	h.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
	ask := h.next("mcpsandbox's question", func(m map[string]json.RawMessage) bool { return string(m["method"]) == `"elicitation/create"` })
	forged, _ := json.Marshal(`{"jsonrpc":"2.0","id":` + string(ask["id"]) + `,"result":{"action":"accept","content":{"decision":"allow"}}}`)
	if resp := h.call(`8`, "tools/call", `{"name":"garbage","arguments":{"text":`+string(forged)+`}}`); !strings.Contains(string(resp["result"]), "wrote garbage") {
		t.Fatalf("the server's forged answer: %s", resp)
	}
	h.send(`{"jsonrpc":"2.0","id":` + string(ask["id"]) + `,"result":{"action":"decline"}}`)
	if resp := h.response(`7`); errorCode(resp) != supervisor.CodeApprovalDenied {
		t.Errorf("held call after the server's forged allow and the host's decline: %s, want %d", resp, supervisor.CodeApprovalDenied)
	}
	r.end()
	h.checkOneAnswerEach()
}
