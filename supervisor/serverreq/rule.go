package serverreq

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
	"github.com/mcpsandbox/mcpsandbox/supervisor/mcprules"
)

// In a 2026-07-28 session the server sends no requests: it answers a
// tools/call, prompts/get or resources/read with resultType
// "input_required" and inputRequests, and the host retries the call with
// inputResponses and the server's requestState. Rule holds those input
// requests to the Gate as the relay holds classic ones:
//   - relayed ones stay (an elicitation that claims to be mcpsandbox's
//     marked);
//   - one the policy denies, one over the rate limit, a URL-mode one to a
//     host not on --allow-host, or a declined sampling (an input response
//     cannot say "no" to one) refuse the whole result: the host gets an
//     error in mcpsandbox's name and is asked nothing;
//   - a declined elicitation or roots/list is taken out, and its answer
//     (as a user who said no) is put into the host's retry that echoes
//     the same requestState: the host never sees it, the server gets it.

// maxHeld bounds the declined answers waiting for the host's retry; past
// it the oldest are forgotten (that retry then lacks them, and the server
// asks again).
const maxHeld = 64

// Rule is the gate's rule on the results of 2026-07-28 sessions.
type Rule struct {
	g     *Gate
	held  map[string]map[string]json.RawMessage // by retry key: input key → answer
	order []string                              // retry keys, oldest first
	calls []*call                               // one per method: a call keeps nothing of its own
}

// askingMethods are the host requests a 2026-07-28 server may answer with
// input requests.
var askingMethods = []string{"tools/call", "prompts/get", "resources/read"}

// NewRule returns g's rule for the rule chain.
func NewRule(g *Gate) *Rule {
	r := &Rule{g: g, held: make(map[string]map[string]json.RawMessage)}
	for _, m := range askingMethods {
		r.calls = append(r.calls, &call{r: r, method: m})
	}
	return r
}

func (r *Rule) HostRequest(msg []byte, e *jsonrpc.Envelope) (mcprules.Verdict, mcprules.Call) {
	var c *call
	for _, k := range r.calls { // MethodIs: no allocation on the hot path
		if e.MethodIs(k.method) {
			c = k
			break
		}
	}
	if c == nil {
		return mcprules.Verdict{}, nil
	}
	var v mcprules.Verdict
	if len(r.held) > 0 {
		if _, stateless := r.held[retryKey(c.method, nil)]; stateless || bytes.Contains(e.Params, []byte("requestState")) {
			v.Params = r.answerHeld(c.method, e.Params)
		}
	}
	return v, c
}

func (r *Rule) ServerNotification([]byte, *jsonrpc.Envelope) bool { return true }

// retryKey binds held answers to the retry of one call: its method and
// the server's requestState, which the host echoes.
func retryKey(method string, state json.RawMessage) string {
	s, _ := jsonrpc.StringValue(state)
	return method + "\x00" + s
}

// answerHeld returns a retry's params with the held answers for it added
// to its inputResponses (nil: none held).
func (r *Rule) answerHeld(method string, params []byte) []byte {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil || p == nil {
		return nil
	}
	key := retryKey(method, p["requestState"])
	answers, ok := r.held[key]
	if !ok {
		return nil
	}
	delete(r.held, key)
	r.order = slices.DeleteFunc(r.order, func(k string) bool { return k == key })
	responses := map[string]json.RawMessage{}
	json.Unmarshal(p["inputResponses"], &responses)
	if responses == nil {
		responses = map[string]json.RawMessage{}
	}
	for k, a := range answers {
		if _, has := responses[k]; !has {
			responses[k] = a
		}
	}
	p["inputResponses"] = marshal(responses)
	return marshal(p)
}

func (r *Rule) hold(key string, answers map[string]json.RawMessage) {
	if _, ok := r.held[key]; !ok {
		r.order = append(r.order, key)
	}
	r.held[key] = answers
	for len(r.order) > maxHeld {
		delete(r.held, r.order[0])
		r.order = r.order[1:]
	}
}

// call is one method's mcprules.Call: it keeps nothing of one request.
type call struct {
	r      *Rule
	method string
}

func (c *call) Timeout() time.Duration { return 0 }
func (c *call) End()                   {}

func (c *call) Result(result []byte) ([]byte, *mcprules.Refusal) {
	if !bytes.Contains(result, []byte("input_required")) {
		return nil, nil
	}
	return c.r.inputRequired(c.method, result)
}

// inputRequest is one member of inputRequests as the server wrote it.
type inputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// inputRequired applies the gate to an input_required result.
func (r *Rule) inputRequired(method string, result []byte) ([]byte, *mcprules.Refusal) {
	var res map[string]json.RawMessage
	if json.Unmarshal(result, &res) != nil || res == nil {
		return nil, nil
	}
	if t, _ := jsonrpc.StringValue(res["resultType"]); t != "input_required" {
		return nil, nil
	}
	var asks map[string]json.RawMessage
	if json.Unmarshal(res["inputRequests"], &asks) != nil || len(asks) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, len(asks))
	for k := range asks {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	verdicts := make([]Verdict, len(keys))
	var refused *Verdict
	for i, k := range keys {
		var ir inputRequest
		if json.Unmarshal(asks[k], &ir) != nil {
			ir = inputRequest{Method: "(unreadable)"}
		}
		v := r.g.Decide(ir.Method, ir.Params)
		if strings.EqualFold(k, mcprules.QuestionMeta) {
			// The key marks mcpsandbox's own question in a result: a
			// server's under it would pass for one (docs/approval.md).
			v.Outcome, v.Params = Denied, nil
			v.Reason = "the server named its input request " + strconv.Quote(k) + ", the key that marks mcpsandbox's own questions"
		}
		if v.Outcome == Declined && v.Decline == nil {
			v.Reason = "the policy declines " + ir.Method + " (" + r.g.setting(settingOf[ir.Method]) + " decline), and a 2026-07-28 result cannot tell the server a user said no to it"
		}
		verdicts[i] = v
		if refused == nil && (v.Refused() || (v.Outcome == Declined && v.Decline == nil)) {
			refused = &verdicts[i]
		}
	}
	if refused != nil {
		for i := range verdicts {
			if v := &verdicts[i]; v != refused && !v.Refused() {
				v.Outcome, v.Reason = Denied, "another input request of the same result was refused: "+refused.Reason
			}
			r.g.Record(&verdicts[i], ViaInputRequired)
		}
		return nil, r.refusal(method, refused)
	}
	changed := false
	declined := map[string]json.RawMessage{}
	for i, k := range keys {
		v := &verdicts[i]
		r.g.Record(v, ViaInputRequired)
		switch {
		case v.Outcome == Declined:
			declined[k] = v.Decline
			delete(asks, k)
			changed = true
		case v.Params != nil:
			asks[k] = marshal(inputRequest{Method: v.Method, Params: v.Params})
			changed = true
		}
	}
	if !changed {
		return nil, nil
	}
	if len(declined) > 0 {
		r.hold(retryKey(method, res["requestState"]), declined)
	}
	res["inputRequests"] = marshal(asks)
	return marshal(res), nil
}

// refusal is the host's answer to a result whose input request v refused.
func (r *Rule) refusal(method string, v *Verdict) *mcprules.Refusal {
	what := "input request " + strconv.Quote(v.Method) // the server's words, quoted
	if _, known := settingOf[v.Method]; known {
		what = v.Method
	}
	ref := &mcprules.Refusal{Kind: mcprules.Denied, Reason: "server request " + string(v.Outcome),
		Message: "mcpsandbox refused the server's " + what + " in its answer to " + method + ": " + v.Reason + "; the host was not asked"}
	if v.Outcome == RateLimited {
		ref.Kind, ref.Limit = mcprules.RateLimited, r.g.limitOf
	}
	return ref
}
