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
