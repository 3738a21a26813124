package supervisor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The MCP rules of the policy, all applied here: tools outside
// --allow-tool or inside --deny-tool are left out of tools/list results and
// their tools/call is answered with CodePolicyDenied without reaching the
// server; with --tool-prefix the host sees every tool's name prefixed and
// the server gets its own names back; a tools/call unanswered after
// --call-timeout gets the host CodeCallTimeout and the server
// notifications/cancelled. The globs match the server's own names. Prompts
// and resources are allowed and denied the same way (promptrules.go), and
// tools/call is held to --rate-limit and --max-concurrent-calls
// (callbudget.go). Only the messages a rule concerns are decoded; with no
// rule set the relay takes no step beyond a nil check.

// rules is nil when the policy sets none.
type rules struct {
	allowTools     []string
	denyTools      []string
	toolPrefix     string
	callTimeout    time.Duration
	allowPrompts   []string
	denyPrompts    []string
	allowResources []string
	denyResources  []string
	budget         *callBudget // nil without --rate-limit and --max-concurrent-calls
}

func newRules(p policy.Policy) *rules {
	ru := &rules{allowTools: p.AllowTools, denyTools: p.DenyTools, toolPrefix: p.ToolPrefix, callTimeout: p.CallTimeout,
		allowPrompts: p.AllowPrompts, denyPrompts: p.DenyPrompts, allowResources: p.AllowResources, denyResources: p.DenyResources,
		budget: newCallBudget(p.RateLimits, p.MaxConcurrentCalls)}
	if !ru.rewritesTools() && ru.callTimeout <= 0 && !ru.prompts() && !ru.resources() && ru.budget == nil {
		return nil
	}
	return ru
}

// rewritesTools reports whether tools/list and tools/call are looked into.
func (ru *rules) rewritesTools() bool {
	return len(ru.allowTools) > 0 || len(ru.denyTools) > 0 || ru.toolPrefix != ""
}

// readsToolName reports whether a tools/call's tool name is needed.
func (ru *rules) readsToolName() bool {
	return ru.rewritesTools() || ru.budget != nil
}

// toolDenial says which setting hides a tool ("" when it is allowed): deny
// wins, and an empty allow list allows all.
func (ru *rules) toolDenial(name string) string {
	switch {
	case policy.MatchGlob(ru.denyTools, name):
		return "DenyTools"
	case len(ru.allowTools) > 0 && !policy.MatchGlob(ru.allowTools, name):
		return "AllowTools"
	}
	return ""
}

// members decodes a JSON object keeping keys exact. Duplicates: the last
// wins, as in JSON.parse and Go's encoding/json.
func members(obj []byte) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil || m == nil {
		return nil, false
	}
	return m, true
}

// toolCallLocked applies the tool rules to a host tools/call: it returns
// the answer when mcpsandbox refuses it, or else the message for the server
// (the tool's own name restored) and how far that moved the bytes after the
// params. A call whose tool cannot be read is refused too: the server might
// read a name the rules did not check. own is the server's name of the
// tool ("" when no rule needs it).
func (r *relay) toolCallLocked(msg []byte, e *jsonrpc.Envelope) (out, answer []byte, shift int, own string) {
	id := e.ID(msg)
	if !r.rules.readsToolName() {
		return msg, nil, 0, ""
	}
	params, ok := members(e.Params)
	var name string
	if ok {
		name, ok = nameOf(params)
	}
	if !ok {
		r.log.Warn("host sent a tools/call without a readable tool name; refused under the tool rules")
		return nil, errorResponse(id, CodePolicyDenied, "tools/call has no tool name mcpsandbox can check against its tool rules; it was not relayed", errorData{Reason: "denied by policy"}), 0, ""
	}
	own, prefixed := strings.CutPrefix(name, r.rules.toolPrefix)
	if !prefixed {
		return nil, errorResponse(id, jsonrpc.CodeInvalidParams, fmt.Sprintf("Unknown tool %q: the tools of this server are named %s... (mcpsandbox's %s)", name, r.rules.toolPrefix, r.setting("ToolPrefix")), nil), 0, ""
	}
	if why := r.rules.toolDenial(own); why != "" {
		rule := "it matches " + r.setting(why)
		if why == "AllowTools" {
			rule = "it matches no " + r.setting(why)
		}
		r.log.Info("tools/call refused by the tool rules", "tool", logValue([]byte(own)), "setting", r.setting(why))
		return nil, errorResponse(id, CodePolicyDenied, fmt.Sprintf("tool %q is denied by mcpsandbox's policy (%s); it was not relayed", name, rule), errorData{Reason: "denied by policy"}), 0, ""
	}
	if r.rules.toolPrefix == "" {
		return msg, nil, 0, own
	}
	params["name"], _ = json.Marshal(own)
	enc, err := encodeObject(params)
	if err != nil {
		return nil, errorResponse(id, CodePolicyDenied, "tools/call params could not be re-encoded with the tool's own name; it was not relayed", errorData{Reason: "denied by policy"}), 0, ""
	}
	start := jsonrpc.OffsetIn(msg, e.Params)
	return jsonrpc.Splice(msg, start, start+len(e.Params), enc), nil, len(enc) - len(e.Params), own
}

// nameOf is the name member of a tool or a tools/call's params. A Go
// program decodes members case-insensitively, a JavaScript one exactly, so
// {"name":"echo","NAME":"crash"} reads as crash to a Go SDK server: a name
// spelt more than one way is unreadable, never checked one way and used
// another.
func nameOf(m map[string]json.RawMessage) (string, bool) { return exactMember(m, "name") }

// exactMember is the string member key of m, unreadable when spelt more
// than one way (see nameOf).
func exactMember(m map[string]json.RawMessage, key string) (string, bool) {
	for k := range m {
		if k != key && strings.EqualFold(k, key) {
			return "", false
		}
	}
	return stringValue(m[key])
}

// stringValue decodes a JSON string value (nil: missing).
func stringValue(v json.RawMessage) (s string, ok bool) {
	if v == nil || json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// encodeObject encodes members compactly, keeping the server's strings as
// written (no HTML escaping).
func encodeObject(m map[string]json.RawMessage) ([]byte, error) {
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

// armCallTimeout starts the --call-timeout clock of a host tools/call.
func (r *relay) armCallTimeout(key string, call uint64) *time.Timer {
	return time.AfterFunc(r.rules.callTimeout, func() { r.callTimedOut(key, call) })
}

// callTimedOut answers a tools/call still in flight after --call-timeout and
// cancels it at the server under the id the server knows; the server's late
// answer then finds nothing in flight and is dropped. A call still held for
// a restarting server gets its cancellation queued behind it.
func (r *relay) callTimedOut(key string, call uint64) {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	r.mu.Lock()
	req, ok := r.inflight[key]
	if !ok || req.call != call {
		r.mu.Unlock()
		return // answered, or failed with the process, in the meantime
	}
	delete(r.inflight, key)
	r.releaseCallLocked(req)
	serverID := req.hostID
	if req.remapped {
		serverID = key
	}
	limit := r.rules.callTimeout.String()
	var cancel []byte
	if !req.cancelled {
		cancel = jsonrpc.NewNotification("notifications/cancelled", map[string]any{
			"requestId": json.RawMessage(serverID),
			"reason":    "mcpsandbox: the call took longer than " + r.setting("CallTimeout") + " " + limit,
		})
	}
	g := r.gen
	toProcess := false
	switch {
	case cancel == nil:
	case req.gen == 0:
		r.enqueueLocked(cancel)
	case g != nil && g.n == req.gen && !g.dead.Load():
		toProcess = true
	}
	r.mu.Unlock()
	if toProcess {
		g.write(cancel)
	}
	r.log.Warn("tools/call timed out; answered the host with an error and cancelled it at the server", "setting", r.setting("CallTimeout"), "limit", limit, "generation", req.gen)
	if !req.cancelled {
		answer := errorResponse([]byte(req.hostID), CodeCallTimeout,
			fmt.Sprintf("tools/call did not complete within mcpsandbox's %s %s; it was cancelled", r.setting("CallTimeout"), limit),
			errorData{Reason: "call timeout", Generation: req.gen, Limit: limit})
		req.audit.endOwn(answer)
		r.host.write(answer)
	}
}
