package policy

import "testing"

func TestRuleDenyWinsAndAnEmptyAllowAllowsAll(t *testing.T) {
	for _, c := range []struct {
		rule    Rule
		name    string
		allowed bool
		by      List
		denial  string
	}{
		{Policy{}.ToolRule(), "anything", true, NoList, ""},
		{Policy{DenyTools: []string{"wipe"}}.ToolRule(), "wipe", false, DenyList, "DenyTools"},
		{Policy{DenyTools: []string{"wipe"}}.ToolRule(), "echo", true, NoList, ""},
		{Policy{AllowTools: []string{"read_*"}}.ToolRule(), "read_file", true, AllowList, ""},
		{Policy{AllowTools: []string{"read_*"}}.ToolRule(), "write_file", false, AllowList, "AllowTools"},
		// Deny wins over an allow that matches too.
		{Policy{AllowTools: []string{"*"}, DenyTools: []string{"delete_*"}}.ToolRule(), "delete_repo", false, DenyList, "DenyTools"},
		{Policy{AllowTools: []string{"*"}, DenyTools: []string{"delete_*"}}.ToolRule(), "get_repo", true, AllowList, ""},
		{Policy{AllowPrompts: []string{"summary"}}.PromptRule(), "other", false, AllowList, "AllowPrompts"},
		{Policy{DenyPrompts: []string{"s*"}}.PromptRule(), "summary", false, DenyList, "DenyPrompts"},
		// Tool and prompt globs stop at '/'; resource URI globs run across it.
		{Policy{DenyTools: []string{"a*"}}.ToolRule(), "a/b", true, NoList, ""},
		{Policy{DenyResources: []string{"file:///srv/*"}}.ResourceRule(), "file:///srv/a/b", false, DenyList, "DenyResources"},
		{Policy{AllowResources: []string{"file:///srv/*"}}.ResourceRule(), "file:///etc/passwd", false, AllowList, "AllowResources"},
		{Policy{AllowResources: []string{"file:///srv/*"}, DenyResources: []string{"*/secret*"}}.ResourceRule(), "file:///srv/x/secret.txt", false, DenyList, "DenyResources"},
		{Policy{AllowResources: []string{"file:///srv/*"}}.ResourceRule(), "file:///srv/x/y", true, AllowList, ""},
	} {
		allowed, by := c.rule.Decide(c.name)
		if allowed != c.allowed || by != c.by {
			t.Errorf("%+v.Decide(%q) = %v, %v; want %v, %v", c.rule, c.name, allowed, by, c.allowed, c.by)
		}
		if got := c.rule.Denial(c.name); got != c.denial {
			t.Errorf("%+v.Denial(%q) = %q, want %q", c.rule, c.name, got, c.denial)
		}
	}
	if (Policy{}).ToolRule().Active() || !(Policy{DenyPrompts: []string{"x"}}).PromptRule().Active() {
		t.Error("Active: an empty rule hides something, or a deny list hides nothing")
	}
}
