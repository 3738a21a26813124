package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpsandbox/mcpsandbox/supervisor/mcprules"
)

const chanInputRequired = "input-required"

// inputRequired answers a 2026-07-28 host's call in mcpsandbox's name with
// its question and a signed requestState; the host retries with the answer
// and the state, and only that retry is relayed.
func (r *Rule) inputRequired(tool, digest, summary string) mcprules.Verdict {
	now := r.now()
	state := r.sign(ticket{Session: r.session, Method: "tools/call", Tool: tool, Digest: digest,
		Asked: now.UnixMilli(), Expires: now.Add(r.timeout).UnixMilli(), Nonce: nonce()})
	result, _ := json.Marshal(map[string]any{
		"resultType": "input_required",
		"inputRequests": map[string]any{
			inputKey: map[string]any{"method": "elicitation/create", "params": r.question(tool, summary, digest)},
		},
		"requestState": state,
	})
	return mcprules.Verdict{Answer: result, Approval: &mcprules.Approval{Channel: chanInputRequired, Decision: "required"}}
}

// retried decides a retry that carries a requestState of mcpsandbox's:
// relayed without mcpsandbox's members when the state verifies and the
// answer allows, refused otherwise.
func (r *Rule) retried(m map[string]json.RawMessage, tool, digest, state string) mcprules.Verdict {
	now := r.now()
	r.mu.Lock()
	t, err := r.verify(state, tool, digest, now)
	r.mu.Unlock()
	if err != nil {
		reason := "malformed"
		if errors.Is(err, errExpired) {
			reason = "expired"
		}
		return refuse(fmt.Sprintf("the call of tool %q carried mcpsandbox's requestState, but %v", tool, err), reason,
			&mcprules.Approval{Channel: chanInputRequired, Decision: reason})
	}
	var responses map[string]json.RawMessage
	raw, ok := exactRaw(m, "inputResponses")
	if ok {
		ok = json.Unmarshal(raw, &responses) == nil
	}
	decision, reason := "malformed", "malformed"
	if ok && responses[inputKey] != nil {
		decision, reason = decide(responses[inputKey])
	}
	a := &mcprules.Approval{Channel: chanInputRequired, Decision: decision, Waited: now.Sub(time.UnixMilli(t.Asked))}
	if reason != "" {
		return mcprules.Verdict{Refusal: r.denied(tool, reason, a)}
	}
	if decision == allowSession {
		r.grant(tool)
	} else {
		r.allowContinuing(tool, digest, time.UnixMilli(t.Expires))
	}
	delete(m, "requestState")
	delete(responses, inputKey)
	if len(responses) == 0 {
		delete(m, "inputResponses")
	} else {
		m["inputResponses"], _ = json.Marshal(responses)
	}
	params, err := mcprules.EncodeObject(m)
	if err != nil {
		return refuse(fmt.Sprintf("the call of tool %q could not be re-encoded without mcpsandbox's answer", tool), "malformed", a)
	}
	return mcprules.Verdict{Params: params, Approval: a}
}

func (r *Rule) grant(tool string) {
	r.mu.Lock()
	r.granted[tool] = true
	r.mu.Unlock()
}

// maxContinuing bounds the calls remembered for their server's own
// rounds: past it the oldest approval is forgotten (its rounds then ask
// again, which fails safe).
const maxContinuing = 256

// allowContinuing lets the server's own input rounds of a call allowed
// once (the host's retries with the server's requestState and the same
// arguments) through until the approval's expiry, without asking again.
func (r *Rule) allowContinuing(tool, digest string, until time.Time) {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, t := range r.continuing {
		if !now.Before(t) {
			delete(r.continuing, k)
		}
	}
	if len(r.continuing) >= maxContinuing {
		var oldest string
		for k, t := range r.continuing {
			if oldest == "" || t.Before(r.continuing[oldest]) {
				oldest = k
			}
		}
		delete(r.continuing, oldest)
	}
	r.continuing[tool+"\x00"+digest] = until
}

// continues reports whether a call carrying a requestState that is not
// mcpsandbox's continues one allowed once, within its approval's life.
func (r *Rule) continues(tool, digest string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	until, ok := r.continuing[tool+"\x00"+digest]
	return ok && r.now().Before(until)
}
