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
	Tools []toolAnnotation `json:"tools"`
}

type toolAnnotation struct {
	Name        string `json:"name"`
	Annotations *struct {
		ReadOnly    *bool `json:"readOnlyHint"`
		Destructive *bool `json:"destructiveHint"`
		OpenWorld   *bool `json:"openWorldHint"`
	} `json:"annotations"`
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
	r.tier(page)
}

// known tiers the pinned tools, and those an override makes destructive
// or open-world, before the server lists anything.
func (r *Rule) known(pinned []json.RawMessage, overrides map[string]policy.ToolOverride) {
	var page toolAnnotations
	for _, text := range pinned {
		var t toolAnnotation
		if json.Unmarshal(text, &t) == nil {
			page.Tools = append(page.Tools, t)
		}
	}
	r.tier(page)
	for name, o := range overrides {
		if (r.tiers[policy.ApproveDestructive] && o.Annotations["destructiveHint"]) ||
			(r.tiers[policy.ApproveOpenWorld] && o.Annotations["openWorldHint"]) {
			r.annotated[name] = true
		}
	}
}

func (r *Rule) tier(page toolAnnotations) {
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
