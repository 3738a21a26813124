package approval

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
	"github.com/mcpsandbox/mcpsandbox/lock"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor/mcprules"
)

// clock is a test's time, moved by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newRule(t *testing.T, c *clock, p policy.Policy) *Rule {
	t.Helper()
	if p.ApprovalTimeout == 0 {
		p.ApprovalTimeout = 2 * time.Minute
	}
	r := New(Options{Policy: p, Server: "bin+fs", Name: "fs", Lock: filepath.Join(t.TempDir(), "mcpsandbox.lock"),
		Now: c.now, Mask: func(a []byte) string { return string(a) }})
	if r == nil {
		t.Fatal("New returned no rule for a policy with a tier")
	}
	return r
}

func request(t *testing.T, r *Rule, msg string) (mcprules.Verdict, mcprules.Call) {
	t.Helper()
	var sc jsonrpc.Scanner
	var b jsonrpc.Batch
	if err := sc.Scan([]byte(msg), &b); err != nil {
		t.Fatal(err)
	}
	return r.HostRequest([]byte(msg), &b.Msgs[0])
}

func verdict(t *testing.T, r *Rule, msg string) mcprules.Verdict {
	t.Helper()
	v, _ := request(t, r, msg)
	return v
}

// host answers mcpsandbox's own requests as a test says.
type host func(ctx context.Context, method string, params []byte) ([]byte, error)

func (h host) Request(ctx context.Context, method string, params []byte) ([]byte, error) {
	return h(ctx, method, params)
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`

func modernCall(args string, extra string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file","arguments":` + args + `,` + modernMeta + extra + `}}`
}

// inputRequired reads mcpsandbox's question and requestState from an Answer.
func inputRequired(t *testing.T, v mcprules.Verdict) (question map[string]any, state string) {
	t.Helper()
	var res struct {
		ResultType    string `json:"resultType"`
		InputRequests map[string]struct {
			Method string         `json:"method"`
			Params map[string]any `json:"params"`
		} `json:"inputRequests"`
		RequestState string `json:"requestState"`
	}
	if v.Answer == nil || json.Unmarshal(v.Answer, &res) != nil || res.ResultType != "input_required" {
		t.Fatalf("want an input_required answer, got %+v", v)
	}
	q := res.InputRequests[inputKey]
	if q.Method != "elicitation/create" {
		t.Fatalf("want mcpsandbox's elicitation among the input requests, got %s", v.Answer)
	}
	return q.Params, res.RequestState
}

func retry(args, state, answer string) string {
	return modernCall(args, `,"requestState":"`+state+`","inputResponses":{"`+inputKey+`":`+answer+`}`)
}

const allowOnceAnswer = `{"action":"accept","content":{"decision":"allow-once"}}`

// A 2026-07-28 host is asked in an input_required result; its retry with
// an accepting answer is relayed once, stripped of mcpsandbox's members; a
// replay, other arguments, a forged or an expired state are refused.
func TestModernHostIsAskedInAnInputRequiredResult(t *testing.T) {
	c := &clock{time.Unix(1_800_000_000, 0)}
	r := newRule(t, c, policy.Policy{ApproveTools: []string{"write_*"}})
	args := `{"path":"/tmp/a","content":"hi","password":"hunter2"}`
	q, state := inputRequired(t, verdict(t, r, modernCall(args, "")))
	msg, _ := q["message"].(string)
	if !strings.HasPrefix(msg, mcprules.QuestionPrefix) || !strings.Contains(msg, `"write_file"`) || !strings.Contains(msg, `"fs"`) {
		t.Errorf("question message: %q", msg)
	}
	if meta, _ := q["_meta"].(map[string]any); meta[mcprules.QuestionMeta] == nil {
		t.Errorf("question carries no _meta[%q]: %v", mcprules.QuestionMeta, q)
	}
	c.t = c.t.Add(3 * time.Second)
	v := verdict(t, r, retry(args, state, allowOnceAnswer))
	if v.Refusal != nil || v.Params == nil {
		t.Fatalf("accepted retry: %+v", v)
	}
	if strings.Contains(string(v.Params), "requestState") || strings.Contains(string(v.Params), "inputResponses") {
		t.Errorf("relayed params keep mcpsandbox's members: %s", v.Params)
	}
	if a := v.Approval; a == nil || a.Channel != "input-required" || a.Decision != "allow-once" || a.Waited != 3*time.Second {
		t.Errorf("audit approval: %+v", v.Approval)
	}
	for name, m := range map[string]string{
		"replay":          retry(args, state, allowOnceAnswer),
		"other arguments": retry(`{"path":"/etc/passwd","content":"x"}`, state, allowOnceAnswer),
		"forged":          retry(args, state[:len(state)-2]+"AA", allowOnceAnswer),
	} {
		if v := verdict(t, r, m); v.Refusal == nil || v.Refusal.Kind != mcprules.ApprovalDenied || v.Refusal.Reason != "malformed" {
			t.Errorf("%s: want refused as malformed, got %+v", name, v)
		}
	}
	_, state = inputRequired(t, verdict(t, r, modernCall(args, "")))
	c.t = c.t.Add(2 * time.Minute)
	if v := verdict(t, r, retry(args, state, allowOnceAnswer)); v.Refusal == nil || v.Refusal.Reason != "expired" {
		t.Errorf("expired state: %+v", v)
	}
	other := newRule(t, c, policy.Policy{ApproveTools: []string{"write_*"}})
	_, state = inputRequired(t, verdict(t, other, modernCall(args, "")))
	if v := verdict(t, r, retry(args, state, allowOnceAnswer)); v.Refusal == nil {
		t.Errorf("another session's state was taken: %+v", v)
	}
}

// Anything but an explicit allow denies, with its reason.
func TestModernDeclineCancelAndMalformedAnswersDeny(t *testing.T) {
	c := &clock{time.Unix(1_800_000_000, 0)}
	r := newRule(t, c, policy.Policy{ApproveTools: []string{"write_file"}})
	for answer, reason := range map[string]string{
		`{"action":"decline"}`:                              "declined",
		`{"action":"cancel"}`:                               "cancelled",
		`{"action":"accept","content":{"decision":"deny"}}`: "declined",
		`{"action":"accept","content":{"decision":"yes"}}`:  "malformed",
		`{"action":"accept"}`:                               "malformed",
		`"allow-once"`:                                      "malformed",
	} {
		_, state := inputRequired(t, verdict(t, r, modernCall(`{}`, "")))
		v := verdict(t, r, retry(`{}`, state, answer))
		if v.Refusal == nil || v.Refusal.Kind != mcprules.ApprovalDenied || v.Refusal.Reason != reason || v.Params != nil {
			t.Errorf("answer %s: want denied (%s), got %+v", answer, reason, v)
		}
	}
}

// A call allowed once may be answered by the server with an input_required
// result of its own: the host's retries, carrying the server's state and
// the same arguments, go through without a second question until the
// approval lapses; other arguments, or no state, are asked about again.
func TestServersOwnRoundsOfAnApprovedCallContinue(t *testing.T) {
	c := &clock{time.Unix(1_800_000_000, 0)}
	r := newRule(t, c, policy.Policy{ApproveTools: []string{"write_*"}, ApprovalTimeout: time.Minute})
	args := `{"path":"/tmp/a","content":"hi"}`
	_, state := inputRequired(t, verdict(t, r, modernCall(args, "")))
	if v := verdict(t, r, retry(args, state, allowOnceAnswer)); v.Refusal != nil || v.Params == nil {
		t.Fatalf("accepted retry: %+v", v)
	}
	serversRound := modernCall(args, `,"requestState":"servers-own","inputResponses":{"k":{"action":"accept"}}`)
	v, _ := request(t, r, serversRound)
	if v.Refusal != nil || v.Answer != nil || v.Pending != nil || v.Approval == nil || v.Approval.Decision != "continued" {
		t.Errorf("the server's own round of an approved call: %+v", v)
	}
	otherArgs := modernCall(`{"path":"/etc/passwd","content":"x"}`, `,"requestState":"servers-own"`)
	if v, _ := request(t, r, otherArgs); v.Answer == nil {
		t.Errorf("another call with the server's state was not asked about: %+v", v)
	}
	if v, _ := request(t, r, modernCall(args, "")); v.Answer == nil {
		t.Errorf("the same call again, without a state, was not asked about: %+v", v)
	}
	c.t = c.t.Add(2 * time.Minute)
	if v, _ := request(t, r, serversRound); v.Answer == nil {
		t.Errorf("a round after the approval lapsed was not asked about: %+v", v)
	}
}

// A requestState that is not mcpsandbox's may be the server's: left alone.
func TestAnotherRequestStateIsLeftAlone(t *testing.T) {
	r := newRule(t, &clock{time.Now()}, policy.Policy{ApproveTools: []string{"write_file"}})
	msg := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{},"requestState":"servers-own","inputResponses":{"k":{}}}}`
	if v, call := request(t, r, msg); v.Refusal != nil || v.Params != nil || v.Answer != nil || v.Pending != nil || call != nil {
		t.Errorf("an untiered call with the server's state: %+v", v)
	}
}

func classicRule(t *testing.T, c *clock, p policy.Policy) *Rule {
	r := newRule(t, c, p)
	verdict(t, r, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`)
	return r
}

func pending(t *testing.T, r *Rule, args string) mcprules.Pending {
	t.Helper()
	v := verdict(t, r, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file","arguments":`+args+`}}`)
	if v.Pending == nil {
		t.Fatalf("want the call held, got %+v", v)
	}
	return v.Pending
}

func answering(answer string, asked *[]byte) host {
	return func(ctx context.Context, method string, params []byte) ([]byte, error) {
		if method != "elicitation/create" {
			return nil, errors.New("unexpected " + method)
		}
		*asked = params
		return []byte(answer), nil
	}
}

// A classic host that declared elicitation is asked with mcpsandbox's own
// elicitation/create; its answer decides, and "for this session" holds
// only in this session.
func TestClassicHostIsAskedWithElicitation(t *testing.T) {
	c := &clock{time.Unix(1_800_000_000, 0)}
	p := policy.Policy{ApproveTools: []string{"write_file"}}
	r := classicRule(t, c, p)
	var asked []byte
	d := pending(t, r, `{"path":"/w/a","token":"***"}`).Decide(context.Background(), answering(allowOnceAnswer, &asked))
	if d.Refusal != nil || d.Approval == nil || d.Approval.Channel != "elicitation" || d.Approval.Decision != "allow-once" {
		t.Fatalf("allowed once: %+v %+v", d, d.Approval)
	}
	var q struct {
		Message string                     `json:"message"`
		Meta    map[string]json.RawMessage `json:"_meta"`
	}
	json.Unmarshal(asked, &q)
	if !strings.HasPrefix(q.Message, "mcpsandbox asks:") || q.Meta[mcprules.QuestionMeta] == nil || !strings.Contains(q.Message, "no network") {
		t.Errorf("question: %s", asked)
	}
	pending(t, r, `{}`) // allow-once granted nothing
	d = pending(t, r, `{}`).Decide(context.Background(), answering(`{"action":"accept","content":{"decision":"allow-session"}}`, &asked))
	if d.Refusal != nil || d.Approval.Decision != "allow-session" {
		t.Fatalf("allowed for the session: %+v", d)
	}
	v := verdict(t, r, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file","arguments":{"x":1}}}`)
	if v.Pending != nil || v.Refusal != nil || v.Approval == nil || v.Approval.Channel != "session" {
		t.Errorf("granted for the session, then: %+v", v)
	}
	pending(t, classicRule(t, c, p), `{}`) // another session asks again
}

func TestClassicDenials(t *testing.T) {
	c := &clock{time.Unix(1_800_000_000, 0)}
	r := classicRule(t, c, policy.Policy{ApproveTools: []string{"write_file"}, ApprovalTimeout: 50 * time.Millisecond})
	var asked []byte
	never := host(func(ctx context.Context, _ string, _ []byte) ([]byte, error) { <-ctx.Done(); return nil, ctx.Err() })
	gone := host(func(context.Context, string, []byte) ([]byte, error) { return nil, errors.New("the host went away") })
	for name, h := range map[string]host{
		"declined": answering(`{"action":"decline"}`, &asked), "cancelled": answering(`{"action":"cancel"}`, &asked),
		"malformed": answering(`{"action":"accept","content":{"decision":true}}`, &asked), "timeout": never, "host-gone": gone,
	} {
		d := pending(t, r, `{}`).Decide(context.Background(), h)
		if d.Refusal == nil || d.Refusal.Kind != mcprules.ApprovalDenied || d.Refusal.Reason != name || d.Approval == nil {
			t.Errorf("%s: %+v", name, d)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if d := pending(t, r, `{}`).Decide(ctx, never); d.Refusal == nil || d.Refusal.Reason != "host-gone" {
		t.Errorf("the call ended while asked: %+v", d)
	}
}

// A host that cannot be asked gets an id to approve; the approval lets one
// call with the same arguments through; it expires.
func TestDeferredApproval(t *testing.T) {
	c := &clock{time.Unix(1_800_000_000, 0)}
	r := newRule(t, c, policy.Policy{ApproveTools: []string{"write_file"}})
	var notified []string
	r.notify = func(summary, body string) { notified = append(notified, summary+"\n"+body) }
	d := pending(t, r, `{"path":"/w/a"}`).Decide(context.Background(), nil)
	ref := d.Refusal
	if ref == nil || ref.Kind != mcprules.ApprovalRequired || ref.ApprovalID == "" || !strings.Contains(ref.Message, "mcpsandbox approve "+ref.ApprovalID) {
		t.Fatalf("deferred: %+v", ref)
	}
	if again := pending(t, r, `{"path":"/w/a"}`).Decide(context.Background(), nil).Refusal; again == nil || again.ApprovalID != ref.ApprovalID {
		t.Errorf("a retry before approval got another id: %+v", again)
	}
	if len(notified) != 1 || !strings.Contains(notified[0], "approve "+ref.ApprovalID) {
		t.Errorf("a person was notified %q, want once, naming the command", notified)
	}
	if _, err := lock.Approve(r.lock, ref.ApprovalID, c.t); err != nil {
		t.Fatal(err)
	}
	if other := pending(t, r, `{"path":"/etc/passwd"}`).Decide(context.Background(), nil).Refusal; other == nil || other.Kind != mcprules.ApprovalRequired || other.ApprovalID == ref.ApprovalID {
		t.Errorf("other arguments took the approval: %+v", other)
	}
	c.t = c.t.Add(time.Second)
	d = pending(t, r, `{"path":"/w/a"}`).Decide(context.Background(), nil)
	if d.Refusal != nil || d.Approval.Decision != "allow-once" || d.Approval.ID != ref.ApprovalID || d.Approval.Waited != 0 {
		t.Errorf("approved: %+v %+v", d.Refusal, d.Approval)
	}
	if d = pending(t, r, `{"path":"/w/a"}`).Decide(context.Background(), nil); d.Refusal == nil || d.Refusal.Kind != mcprules.ApprovalRequired {
		t.Errorf("one approval let two calls through: %+v", d)
	}
	id := d.Refusal.ApprovalID
	lock.Approve(r.lock, id, c.t)
	c.t = c.t.Add(3 * time.Minute)
	if d = pending(t, r, `{"path":"/w/a"}`).Decide(context.Background(), nil); d.Refusal == nil || d.Refusal.Reason != "expired" || d.Approval.ID != id {
		t.Errorf("expired: %+v", d.Refusal)
	}
}

// Annotations put tools in a tier, MCP's defaults counting, and never take
// them out of it.
func TestAnnotationTiersOnlyRaise(t *testing.T) {
	r := newRule(t, &clock{time.Now()}, policy.Policy{ApproveAnnotated: []string{policy.ApproveDestructive}})
	list := func(result string) {
		_, call := request(t, r, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		call.Result([]byte(result))
	}
	list(`{"tools":[{"name":"rm"},{"name":"read","annotations":{"readOnlyHint":true}},{"name":"add","annotations":{"destructiveHint":false}}]}`)
	list(`{"tools":[{"name":"rm","annotations":{"readOnlyHint":true}}]}`)
	for tool, want := range map[string]bool{"rm": true, "read": false, "add": false} {
		if got := r.tiered(tool); got != want {
			t.Errorf("%s tiered: %v, want %v", tool, got, want)
		}
	}
}

// docs/approval.md shows the question as a host gets it.
func TestTheQuestionIsAsTheDocsShow(t *testing.T) {
	want := testenv.DocString(t, "docs/approval.md", `(?m)^   "message": ("mcpsandbox asks: .*"),$`)
	p := policy.Policy{ApproveTools: []string{"write_file"}, GrantArgs: policy.GrantRW, Net: policy.NetNone, ApprovalTimeout: time.Minute}
	r := New(Options{Policy: p, Name: "@modelcontextprotocol/server-filesystem", Mask: func(a []byte) string { return string(a) }})
	var q struct{ Message string }
	json.Unmarshal(r.question("write_file", `{"path":"/home/you/notes/todo.md","content":"buy milk"}`, "sha256:0"), &q)
	if q.Message != want {
		t.Errorf("the question reads\n%s\ndocs/approval.md shows\n%s", q.Message, want)
	}
}

// Annotations the lock pins, or an override raises, tier a tool before the
// server lists it, and a server that lists it as harmless does not lower it.
func TestPinnedAndOverriddenAnnotationsTier(t *testing.T) {
	r := New(Options{Policy: policy.Policy{ApproveAnnotated: []string{policy.ApproveOpenWorld}, ApprovalTimeout: time.Minute},
		Known:     []json.RawMessage{[]byte(`{"name":"fetch","annotations":{"openWorldHint":true}}`), []byte(`{"name":"calc","annotations":{"openWorldHint":false}}`)},
		Overrides: map[string]policy.ToolOverride{"post": {Annotations: map[string]bool{"openWorldHint": true}}}})
	_, call := request(t, r, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	call.Result([]byte(`{"tools":[{"name":"fetch","annotations":{"openWorldHint":false}},{"name":"post","annotations":{"openWorldHint":false}}]}`))
	for tool, want := range map[string]bool{"fetch": true, "post": true, "calc": false} {
		if got := r.tiered(tool); got != want {
			t.Errorf("%s tiered: %v, want %v", tool, got, want)
		}
	}
}

// BenchmarkUntieredCall is the rule's share of a 1 KiB tools/call of a tool
// no tier names: what every call pays for a policy with a tier.
func BenchmarkUntieredCall(b *testing.B) {
	r := New(Options{Policy: policy.Policy{ApproveTools: []string{"write_*"}, ApprovalTimeout: time.Minute}})
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("x", 1024) + `"}}}`)
	var sc jsonrpc.Scanner
	var batch jsonrpc.Batch
	if err := sc.Scan(msg, &batch); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if v, _ := r.HostRequest(msg, &batch.Msgs[0]); v.Refusal != nil || v.Pending != nil {
			b.Fatal("an untiered call was held")
		}
	}
}

// A host that takes only URL elicitations cannot be shown the form: it
// gets the deferred path, in both eras.
func TestURLOnlyElicitationIsNotAsked(t *testing.T) {
	r := newRule(t, &clock{time.Now()}, policy.Policy{ApproveTools: []string{"write_file"}})
	verdict(t, r, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"url":{}}}}}`)
	v := verdict(t, r, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file","arguments":{},"_meta":{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"url":{}}}}}}`)
	if _, isDeferred := v.Pending.(*deferred); !isDeferred || v.Answer != nil {
		t.Errorf("a URL-only host: %+v, want the deferred path", v)
	}
}
