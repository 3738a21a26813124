package scan

import "fmt"

// Severity ranks a finding. High holds an item even at first sight.
type Severity int

const (
	Low Severity = iota + 1
	Medium
	High
)

func (s Severity) String() string {
	switch s {
	case Low:
		return "low"
	case Medium:
		return "medium"
	case High:
		return "high"
	}
	return fmt.Sprintf("severity(%d)", int(s))
}

// MarshalText writes the severity as its name, in a lock and in JSON.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Rule ids: what a finding is about (docs/pins.md lists them).
const (
	RuleTagText    = "hidden-tag-text"  // Unicode tag characters (U+E0000–U+E007F)
	RuleBidi       = "bidi-control"     // U+202A–U+202E, U+2066–U+2069
	RuleInvisible  = "invisible"        // zero-width characters, variation selectors, a BOM inside text
	RuleDirective  = "directive"        // words aimed at the model rather than at describing
	RuleSensitive  = "sensitive-path"   // a credential or host configuration file
	RuleURLHost    = "url-host"         // a URL whose host the egress allowlist does not name
	RuleShadowing  = "shadowing"        // tells the model how to use another server's tool
	RuleOtherTool  = "names-other-tool" // names another server's tool
	RuleToolClash  = "tool-name-clash"  // another server exposes the same tool name
	RuleUnreadable = "unreadable"       // text the scanner cannot read: held, failing closed
)

// Finding is one thing the scanner saw in an item. Reason never holds an
// invisible character: they are written as U+XXXX.
type Finding struct {
	Severity Severity `json:"severity"`
	Rule     string   `json:"rule"`
	Field    string   `json:"field"`  // e.g. description, inputSchema.properties.path.description
	Reason   string   `json:"reason"` // a predicate of Field: "names …", "hides …"
}

// String is the finding as one line, its field the subject of its reason:
// high: description names "~/.ssh/id_rsa" (SSH keys) … [sensitive-path]
func (f Finding) String() string {
	return fmt.Sprintf("%s: %s %s [%s]", f.Severity, f.Field, f.Reason, f.Rule)
}

// Holds reports whether findings hold their item until it is approved:
// whether any is of high severity.
func Holds(findings []Finding) bool {
	for _, f := range findings {
		if f.Severity >= High {
			return true
		}
	}
	return false
}

// Strings are findings as lines, for a lock's pending entry.
func Strings(findings []Finding) []string {
	var out []string
	for _, f := range findings {
		out = append(out, f.String())
	}
	return out
}
