package mcprules

import (
	"encoding/json"
	"fmt"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
)

// The prompt and resource rules: prompts are matched by name as tools are;
// resources by URI, where * runs across '/' (policy.MatchURIGlob). A request
// naming a denied one (prompts/get, resources/read, resources/subscribe,
// completion/complete) is refused, and one whose name or URI cannot be read
// is refused too while the rules are on: the server might read it as one
// they deny.

// requestDenial applies the prompt and resource rules to a host request of
// method: its refusal, or nil when it may go on.
func (s *set) requestDenial(method string, e *jsonrpc.Envelope) *Refusal {
	var what, name, why string
	params, ok := members(e.Params)
	switch method {
	case "prompts/get":
		if !s.prompts.Active() {
			return nil
		}
		what = "prompt"
		if ok {
			name, ok = nameOf(params)
		}
	case "resources/read", "resources/subscribe":
		if !s.resources.Active() {
			return nil
		}
		what = "resource"
		if ok {
			name, ok = jsonrpc.ExactMember(params, "uri")
		}
	case "completion/complete":
		if !s.prompts.Active() && !s.resources.Active() {
			return nil
		}
		what, name, ok = completionRef(params, ok)
		if ok && (what == "prompt" && !s.prompts.Active() || what == "resource" && !s.resources.Active()) {
			return nil
		}
	default:
		return nil
	}
	if ok && what == "resource" {
		if why = uncheckableURI(name); why != "" {
			ok = false
		}
	}
	if !ok {
		if why == "" {
			why = "it names no " + what + " mcpsandbox can read"
		}
		return &Refusal{Kind: Denied, Reason: "denied by policy",
			Message: fmt.Sprintf("%s cannot be checked against mcpsandbox's %s rules (%s); it was not relayed", method, what, why)}
	}
	rule := s.prompts
	if what == "resource" {
		rule = s.resources
	}
	allowed, by := rule.Decide(name)
	if allowed {
		return nil
	}
	return &Refusal{Kind: Denied, Reason: "denied by policy",
		Message: fmt.Sprintf("%s %q is denied by mcpsandbox's policy (%s); it was not relayed", what, name, s.matches(rule, by))}
}

// completionRef reads what a completion/complete is about: its ref is
// {"type":"ref/prompt","name":...} or {"type":"ref/resource","uri":...}.
// Any other ref is unreadable.
func completionRef(params map[string]json.RawMessage, ok bool) (what, name string, readable bool) {
	if !ok {
		return "reference", "", false
	}
	ref, ok := members(params["ref"])
	if !ok {
		return "reference", "", false
	}
	typ, _ := jsonrpc.ExactMember(ref, "type")
	switch typ {
	case "ref/prompt":
		name, ok = nameOf(ref)
		return "prompt", name, ok
	case "ref/resource":
		name, ok = jsonrpc.ExactMember(ref, "uri")
		return "resource", name, ok
	}
	return "reference", "", false
}

// updateAllowed reports whether a notifications/resources/updated may reach
// the host: not for a denied URI, nor one the rules cannot read.
func (s *set) updateAllowed(e *jsonrpc.Envelope) bool {
	params, ok := members(e.Params)
	var uri string
	if ok {
		uri, ok = jsonrpc.ExactMember(params, "uri")
	}
	return ok && s.resources.Denial(uri) == ""
}
