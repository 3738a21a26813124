package approval

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/supervisor/mcprules"
)

// The form's one field and its choices.
const (
	field        = "decision"
	allowOnce    = "allow-once"
	allowSession = "allow-session"
	deny         = "deny"
)

// question is the elicitation/create params asking whether tool may run
// with arguments (already masked).
func (r *Rule) question(tool, summary, digest string) json.RawMessage {
	var msg strings.Builder
	fmt.Fprintf(&msg, "%s may the MCP server %q run its tool %q with these arguments?\n%s\n", mcprules.QuestionPrefix, r.name, tool, summary)
	fmt.Fprintf(&msg, "The sandbox lets this server reach: %s.", r.reach)
	params := map[string]any{
		"mode":    "form",
		"message": msg.String(),
		"requestedSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				field: map[string]any{
					"type":  "string",
					"title": "Decision",
					"oneOf": []any{
						map[string]string{"const": allowOnce, "title": "Allow once"},
						map[string]string{"const": allowSession, "title": "Allow for this session"},
						map[string]string{"const": deny, "title": "Deny"},
					},
				},
			},
			"required": []string{field},
		},
		"_meta": map[string]any{mcprules.QuestionMeta: map[string]string{"server": r.name, "tool": tool, "digest": digest}},
	}
	b, _ := json.Marshal(params)
	return b
}

// elicitAnswer is an elicitation result as the host sends it.
type elicitAnswer struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content"`
}

// decide reads an elicitation result: allow-once or allow-session, or the
// reason it denies (declined, cancelled, malformed).
func decide(result []byte) (decision, reason string) {
	var a elicitAnswer
	if json.Unmarshal(result, &a) != nil {
		return "malformed", "malformed"
	}
	switch a.Action {
	case "decline":
		return deny, "declined"
	case "cancel":
		return "cancel", "cancelled"
	case "accept":
	default:
		return "malformed", "malformed"
	}
	switch a.Content[field] {
	case allowOnce:
		return allowOnce, ""
	case allowSession:
		return allowSession, ""
	case deny:
		return deny, "declined"
	}
	return "malformed", "malformed"
}
