package serverreq

import (
	"encoding/json"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/supervisor/mcprules"

	"github.com/mcpsandbox/mcpsandbox/supervisor/diagnose"
)

// mcpsandbox asks the host questions of its own (approval of a tool call)
// with elicitation/create, so a server's elicitation must not pass for one
// of them. mcpsandbox's carry two marks no server's keeps:
// mcprules.QuestionMeta in their _meta, and a message beginning
// mcprules.QuestionPrefix. A server's elicitation that carries the key, or
// whose message reads as mcpsandbox's (a line beginning "mcpsandbox", in
// any look-alike spelling, or "mcpsandbox asks" anywhere), loses the key
// and has diagnose.ServerWords put before its message, as the relay does
// for a server's error that claims to be mcpsandbox's.

// claimsOwn reports whether an elicitation's message would pass for
// mcpsandbox's.
func claimsOwn(message string) bool {
	return diagnose.MayPassForHint(marshal(message)) || strings.Contains(strings.ToLower(message), "mcpsandbox asks")
}

// markSpoof returns an elicitation's params (an object) written anew as
// the server's when they claim to be mcpsandbox's, and false when they do
// not (or are no object: the host will refuse those itself).
func markSpoof(params json.RawMessage) (json.RawMessage, bool) {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil || p == nil {
		return nil, false
	}
	changed := false
	for k, v := range p {
		switch {
		case strings.EqualFold(k, "_meta"):
			var meta map[string]json.RawMessage
			if json.Unmarshal(v, &meta) != nil || meta == nil {
				continue
			}
			for mk := range meta {
				if strings.EqualFold(mk, mcprules.QuestionMeta) {
					delete(meta, mk)
					changed = true
				}
			}
			if changed {
				p[k] = marshal(meta)
			}
		}
	}
	// The message is read as a host reads it: any case, the last wins.
	var parts struct{ Message *string }
	if json.Unmarshal(params, &parts) == nil && parts.Message != nil && (changed || claimsOwn(*parts.Message)) {
		for k := range p {
			if strings.EqualFold(k, "message") {
				delete(p, k)
			}
		}
		p["message"] = marshal(diagnose.AsServerWords(*parts.Message))
		changed = true
	}
	if !changed {
		return nil, false
	}
	return marshal(p), true
}

func marshal(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
