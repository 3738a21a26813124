package policy

// Rule is one of the MCP rules: on tools, prompts or resources. Deny wins:
// a name Deny matches is hidden; otherwise, when Allow is not empty, so is
// a name Allow does not match. An empty Allow allows all.
type Rule struct {
	Allow, Deny []string
	// AllowField and DenyField are the Policy fields the lists come from
	// ("AllowTools"), for messages that say which setting decided.
	AllowField, DenyField string
	// Match reports whether name matches one of globs: MatchGlob when nil,
	// MatchURIGlob for resource URIs.
	Match func(globs []string, name string) bool
}

// List names a Rule's list.
type List int

const (
	NoList    List = iota // neither list decided: Allow is empty and Deny does not match
	AllowList             // Allow matched the name, or (denied) did not
	DenyList              // Deny matched the name: denied
)

// Decide reports whether name is allowed, and which list decided.
func (r Rule) Decide(name string) (allowed bool, by List) {
	match := r.Match
	if match == nil {
		match = MatchGlob
	}
	switch {
	case match(r.Deny, name):
		return false, DenyList
	case len(r.Allow) == 0:
		return true, NoList
	case match(r.Allow, name):
		return true, AllowList
	}
	return false, AllowList
}

// Denial is the Policy field that hides name ("" when name is allowed).
func (r Rule) Denial(name string) string {
	if ok, by := r.Decide(name); !ok {
		return r.Field(by)
	}
	return ""
}

// Field is the Policy field of list l ("" for NoList).
func (r Rule) Field(l List) string {
	switch l {
	case AllowList:
		return r.AllowField
	case DenyList:
		return r.DenyField
	}
	return ""
}

// Active reports whether the rule can hide anything.
func (r Rule) Active() bool { return len(r.Allow) > 0 || len(r.Deny) > 0 }

// ToolRule is the rule on tools/list and tools/call, by the server's own
// tool names (before ToolPrefix).
func (p Policy) ToolRule() Rule {
	return Rule{Allow: p.AllowTools, Deny: p.DenyTools, AllowField: "AllowTools", DenyField: "DenyTools"}
}

// PromptRule is the rule on prompts, by name.
func (p Policy) PromptRule() Rule {
	return Rule{Allow: p.AllowPrompts, Deny: p.DenyPrompts, AllowField: "AllowPrompts", DenyField: "DenyPrompts"}
}

// ResourceRule is the rule on resources, by URI (or URI template): * runs
// across '/'.
func (p Policy) ResourceRule() Rule {
	return Rule{Allow: p.AllowResources, Deny: p.DenyResources, AllowField: "AllowResources", DenyField: "DenyResources", Match: MatchURIGlob}
}
