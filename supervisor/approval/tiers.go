package approval

import (
	"encoding/json"
	"slices"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// tiered reports whether a call of tool waits for a person: a glob of
// --approve-tool names it, or its annotations fall in an --approve-annotated
// tier. Callers hold r.mu.
func (r *Rule) tiered(tool string) bool {
	return policy.MatchGlob(r.globs, tool) || r.annotated[tool]
}

// toolAnnotations is what a tools/list result says of its tools.
type toolAnnotations struct {
	Tools []struct {
		Name        string `json:"name"`
		Annotations *struct {
			ReadOnly    *bool `json:"readOnlyHint"`
			Destructive *bool `json:"destructiveHint"`
			OpenWorld   *bool `json:"openWorldHint"`
		} `json:"annotations"`
	} `json:"tools"`
}

// listed records the tools of a tools/list result whose annotations put
// them in a tier. MCP's defaults count where a hint is absent (destructive
// and open-world true, read-only false), and a tool once tiered stays so:
// a server cannot lower its tier by listing itself anew.
func (r *Rule) listed(result []byte) {
	var page toolAnnotations
	if json.Unmarshal(result, &page) != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range page.Tools {
		readOnly, destructive, openWorld := false, true, true
		if a := t.Annotations; a != nil {
			readOnly = hint(a.ReadOnly, false)
			destructive = hint(a.Destructive, true)
			openWorld = hint(a.OpenWorld, true)
		}
		if (r.tiers[policy.ApproveDestructive] && destructive && !readOnly) ||
			(r.tiers[policy.ApproveOpenWorld] && openWorld) {
			r.annotated[t.Name] = true
		}
	}
}

func hint(b *bool, absent bool) bool {
	if b == nil {
		return absent
	}
	return *b
}

// tierSet is the --approve-annotated tiers as a set.
func tierSet(tiers []string) map[string]bool {
	m := map[string]bool{}
	for _, t := range tiers {
		if slices.Contains([]string{policy.ApproveDestructive, policy.ApproveOpenWorld}, t) {
			m[t] = true
		}
	}
	return m
}
