package approval

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
	"github.com/mcpsandbox/mcpsandbox/lock"
	"github.com/mcpsandbox/mcpsandbox/supervisor/mcprules"
)

// inputKey names mcpsandbox's question among a result's inputRequests and
// its answer among a retry's inputResponses: the mark its question carries
// in _meta too, which a server's elicitation may not (docs/approval.md).
const inputKey = mcprules.QuestionMeta

// toolCall decides a tools/call: let it through (untiered, or granted for
// the session, or a retry carrying a valid signed answer), or ask.
func (r *Rule) toolCall(params []byte) (mcprules.Verdict, mcprules.Call) {
	// The name alone decides most calls: the rest is decoded only for a
	// tool a tier names, so an untiered call costs one scan of its params.
	rawName, ok := jsonrpc.ExactMemberValue(params, "name")
	tool, okName := jsonrpc.StringValue(rawName)
	if !ok || !okName {
		return refuse("tools/call has no tool name mcpsandbox can check against its approval tiers", "malformed", nil), nil
	}
	r.mu.Lock()
	tiered, granted, classic := r.tiered(tool), r.granted[tool], r.elicitation
	r.mu.Unlock()
	if !tiered {
		return mcprules.Verdict{}, nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(params, &m) != nil || m == nil {
		return refuse("tools/call params are not an object mcpsandbox can check against its approval tiers", "malformed", nil), nil
	}
	args, okArgs := exactRaw(m, "arguments")
	digest, err := lock.ArgumentDigest(args)
	state, okState := exactRaw(m, "requestState")
	if !okArgs || !okState || err != nil {
		// A server may read a member spelt another way (Go decodes
		// case-insensitively): what is approved must be what it reads.
		return refuse(fmt.Sprintf("tools/call of %q has arguments mcpsandbox cannot read unambiguously, so it cannot ask for their approval", tool), "malformed", nil), nil
	}
	if s, _ := jsonrpc.StringValue(state); strings.HasPrefix(s, statePrefix) {
		return r.retried(m, tool, digest, s), nil
	} else if state != nil && r.continues(tool, digest) {
		return mcprules.Verdict{Approval: &mcprules.Approval{Channel: chanInputRequired, Decision: "continued"}}, nil
	}
	if granted {
		return mcprules.Verdict{Approval: &mcprules.Approval{Channel: "session", Decision: allowSession}}, nil
	}
	summary := r.mask(args)
	switch {
	case modernElicitation(m):
		return r.inputRequired(tool, digest, summary), nil
	case classic:
		return mcprules.Verdict{Pending: &elicited{r: r, tool: tool, digest: digest, summary: summary}}, nil
	}
	return mcprules.Verdict{Pending: &deferred{r: r, tool: tool, digest: digest, summary: summary}}, nil
}

// exactRaw is member key of m, nil when absent; ok is false when the key is
// also spelt another way.
func exactRaw(m map[string]json.RawMessage, key string) (json.RawMessage, bool) {
	for k := range m {
		if k != key && strings.EqualFold(k, key) {
			return nil, false
		}
	}
	return m[key], true
}

// modernElicitation reports whether a 2026-07-28 request declares, in its
// _meta, a client that answers form elicitations in input_required results.
func modernElicitation(m map[string]json.RawMessage) bool {
	var meta struct {
		Caps *struct {
			Elicitation map[string]json.RawMessage `json:"elicitation"`
		} `json:"io.modelcontextprotocol/clientCapabilities"`
	}
	if json.Unmarshal(m["_meta"], &meta) != nil || meta.Caps == nil {
		return false
	}
	return formElicitation(meta.Caps.Elicitation)
}

// refuse is a denial of reason, with what the audit records of it.
func refuse(msg, reason string, a *mcprules.Approval) mcprules.Verdict {
	return mcprules.Verdict{Refusal: denial(msg, reason, a)}
}

func denial(msg, reason string, a *mcprules.Approval) *mcprules.Refusal {
	return &mcprules.Refusal{Kind: mcprules.ApprovalDenied, Reason: reason, Approval: a,
		Message: "mcpsandbox: " + msg + "; it was not relayed"}
}

// denied is the refusal of a call a person (or no one) did not allow.
func (r *Rule) denied(tool, reason string, a *mcprules.Approval) *mcprules.Refusal {
	why := map[string]string{
		"declined": "the person asked declined it", "cancelled": "the person asked dismissed the question",
		"timeout":   fmt.Sprintf("no one answered within --approval-timeout (%s)", r.timeout),
		"host-gone": "the host could not be asked or went away", "malformed": "the answer was none of the form's choices",
	}[reason]
	return denial(fmt.Sprintf("the call of tool %q was not approved: %s", tool, why), reason, a)
}
