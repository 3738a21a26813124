package mcprules

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The tool rules match the server's own names; with --tool-prefix the host
// sees each tool prefixed, and a name without the prefix is an unknown
// tool.

// rewritesTools reports whether tools/list and tools/call are looked into.
func (s *set) rewritesTools() bool { return s.tools.Active() || s.toolPrefix != "" }

// toolCall applies the tool rules, the budget and the timeout to a host
// tools/call. A call whose tool cannot be read is refused: the server might
// read a name the rules did not check.
func (s *set) toolCall(e *jsonrpc.Envelope) (Verdict, Call) {
	var v Verdict
	var own string
	if s.rewritesTools() || s.budget != nil {
		params, ok := members(e.Params)
		var name string
		if ok {
			name, ok = nameOf(params)
		}
		if !ok {
			return deny("tools/call has no tool name mcpsandbox can check against its tool rules; it was not relayed"), nil
		}
		var prefixed bool
		if own, prefixed = strings.CutPrefix(name, s.toolPrefix); !prefixed {
			return Verdict{Refusal: &Refusal{Kind: UnknownTool, Reason: "unknown tool",
				Message: fmt.Sprintf("Unknown tool %q: the tools of this server are named %s... (mcpsandbox's %s)", name, s.toolPrefix, s.setting("ToolPrefix"))}}, nil
		}
		if ok, by := s.tools.Decide(own); !ok {
			return deny(fmt.Sprintf("tool %q is denied by mcpsandbox's policy (%s); it was not relayed", name, s.matches(s.tools, by))), nil
		}
		if s.toolPrefix != "" {
			params["name"], _ = json.Marshal(own)
			enc, err := EncodeObject(params)
			if err != nil {
				return deny("tools/call params could not be re-encoded with the tool's own name; it was not relayed"), nil
			}
			v.Params = enc
		}
	}
	if s.secrets != nil {
		if ref := s.secretRefusal(e); ref != nil {
			return Verdict{Refusal: ref}, nil
		}
	}
	c := &call{s: s, timeout: s.callTimeout}
	if s.budget != nil {
		if ref := s.budget.take(s, own, c); ref != nil {
			return Verdict{Refusal: ref}, nil
		}
	}
	if c.timeout <= 0 && !c.slot {
		return v, nil
	}
	return v, c
}

func deny(message string) Verdict {
	return Verdict{Refusal: &Refusal{Kind: Denied, Reason: "denied by policy", Message: message}}
}

// matches says which list of rule decided against a name, the user's way.
func (s *set) matches(rule policy.Rule, by policy.List) string {
	if by == policy.AllowList {
		return "it matches no " + s.setting(rule.Field(by))
	}
	return "it matches " + s.setting(rule.Field(by))
}
