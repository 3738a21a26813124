package supervisor

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The prompt and resource rules: prompts are matched by name as tools are;
// resources by URI, where * runs across '/' (policy.MatchURIGlob). A
// denied prompt or resource is left out of its list, and a request naming
// one (prompts/get, resources/read, resources/subscribe, completion/complete)
// is answered with CodePolicyDenied without reaching the server. A resource
// URI the server might read other than as written (a dot segment, an
// escaped '.', '/' or '\', an upper-case scheme) is refused while resource
// rules are set: the server could resolve it to one the rules deny.

func (ru *rules) prompts() bool   { return len(ru.allowPrompts) > 0 || len(ru.denyPrompts) > 0 }
func (ru *rules) resources() bool { return len(ru.allowResources) > 0 || len(ru.denyResources) > 0 }

// promptDenial says which setting hides a prompt ("" when it is allowed).
func (ru *rules) promptDenial(name string) string {
	switch {
	case policy.MatchGlob(ru.denyPrompts, name):
		return "DenyPrompts"
	case len(ru.allowPrompts) > 0 && !policy.MatchGlob(ru.allowPrompts, name):
		return "AllowPrompts"
	}
	return ""
}

// resourceDenial says which setting hides a resource URI or URI template.
func (ru *rules) resourceDenial(uri string) string {
	switch {
	case policy.MatchURIGlob(ru.denyResources, uri):
		return "DenyResources"
	case len(ru.allowResources) > 0 && !policy.MatchURIGlob(ru.allowResources, uri):
		return "AllowResources"
	}
	return ""
}

// uncheckableURI says why a URI cannot be trusted to mean what the globs
// saw ("" when it can).
func uncheckableURI(uri string) string {
	scheme, rest, ok := strings.Cut(uri, ":")
	if ok && strings.ToLower(scheme) != scheme {
		return "its scheme is not in lower case"
	}
	if !ok {
		rest = uri
	}
	for _, esc := range []string{"%2e", "%2f", "%5c"} {
		if strings.Contains(strings.ToLower(rest), esc) {
			return "it escapes '.', '/' or '\\'"
		}
	}
	if strings.Contains(rest, "\\") {
		return "it holds a '\\'"
	}
	path := rest
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	for _, seg := range strings.Split(path, "/") {
		if seg == "." || seg == ".." {
			return "it has a " + seg + " segment"
		}
	}
	return ""
}

// requestDenialLocked applies the prompt and resource rules to a host
// request of kind mk: the answer when mcpsandbox refuses it, else nil.
func (r *relay) requestDenialLocked(mk methodKind, msg []byte, e *jsonrpc.Envelope) []byte {
	ru := r.rules
	var what, name, why string
	params, ok := members(e.Params)
	switch mk {
	case mPromptsGet:
		if !ru.prompts() {
			return nil
		}
		what = "prompt"
		if ok {
			name, ok = nameOf(params)
		}
	case mResourcesRead, mSubscribe:
		if !ru.resources() {
			return nil
		}
		what = "resource"
		if ok {
			name, ok = exactMember(params, "uri")
		}
	case mComplete:
		if !ru.prompts() && !ru.resources() {
			return nil
		}
		what, name, ok = completionRef(params, ok)
		if ok && (what == "prompt" && !ru.prompts() || what == "resource" && !ru.resources()) {
			return nil
		}
	default:
		return nil
	}
	method := e.MethodString()
	id := e.ID(msg)
	if ok && what == "resource" {
		if why = uncheckableURI(name); why != "" {
			ok = false
		}
	}
	if !ok {
		if why == "" {
			why = "it names no " + what + " mcpsandbox can read"
		}
		r.log.Warn(method+" refused: its "+what+" cannot be checked against the MCP rules", "problem", why)
		return errorResponse(id, CodePolicyDenied, fmt.Sprintf("%s cannot be checked against mcpsandbox's %s rules (%s); it was not relayed", method, what, why), errorData{Reason: "denied by policy"})
	}
	setting := ru.promptDenial(name)
	if what == "resource" {
		setting = ru.resourceDenial(name)
	}
	if setting == "" {
		return nil
	}
	rule := "it matches " + r.setting(setting)
	if strings.HasPrefix(setting, "Allow") {
		rule = "it matches no " + r.setting(setting)
	}
	r.log.Info(method+" refused by the MCP rules", what, logValue([]byte(name)), "setting", r.setting(setting))
	return errorResponse(id, CodePolicyDenied, fmt.Sprintf("%s %q is denied by mcpsandbox's policy (%s); it was not relayed", what, name, rule), errorData{Reason: "denied by policy"})
}

// completionRef reads what a completion/complete is about: its ref is
// {"type":"ref/prompt","name":...} or {"type":"ref/resource","uri":...}.
// Any other ref is unreadable, and refused while the rules are on: a server
// might read it as one they deny.
func completionRef(params map[string]json.RawMessage, ok bool) (what, name string, readable bool) {
	if !ok {
		return "reference", "", false
	}
	ref, ok := members(params["ref"])
	if !ok {
		return "reference", "", false
	}
	typ, _ := exactMember(ref, "type")
	switch typ {
	case "ref/prompt":
		name, ok = nameOf(ref)
		return "prompt", name, ok
	case "ref/resource":
		name, ok = exactMember(ref, "uri")
		return "resource", name, ok
	}
	return "reference", "", false
}

// updateAllowedLocked reports whether a notifications/resources/updated
// may reach the host: not for a denied URI, nor one the rules cannot read.
func (r *relay) updateAllowedLocked(g *generation, e *jsonrpc.Envelope) bool {
	params, ok := members(e.Params)
	var uri string
	if ok {
		uri, ok = exactMember(params, "uri")
	}
	if ok && r.rules.resourceDenial(uri) == "" {
		return true
	}
	if r.logLimit.allow(g.log) {
		g.log.Debug("notifications/resources/updated dropped by the resource rules", "uri", logValue([]byte(uri)))
	}
	return false
}
