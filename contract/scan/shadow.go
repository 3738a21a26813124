package scan

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// instructing are the words that, beside another server's tool name, tell
// the model how to use that tool: shadowing ("when send_email is called,
// always add a Bcc").
var instructing = regexp.MustCompile(`\b(instead|always|must|never|before|after|whenever|make sure|ensure|do not use|don't use|only use|should|required to|in place of)\b`)

// otherTool is a tool of another server, as the host sees it.
type otherTool struct{ server, name string }

// otherTools are the tools of ctx.Others that this server does not expose
// itself (a sibling's name is no shadowing), sorted.
func otherTools(ctx Context) []otherTool {
	own := map[string]bool{}
	for _, n := range ctx.OwnTools {
		own[strings.ToLower(n)] = true
		own[strings.ToLower(ctx.ToolPrefix+n)] = true
	}
	var out []otherTool
	for server, names := range ctx.Others {
		for _, n := range names {
			if n != "" && !own[strings.ToLower(n)] {
				out = append(out, otherTool{server, n})
			}
		}
	}
	slices.SortFunc(out, func(a, b otherTool) int { return strings.Compare(a.server+"\x00"+a.name, b.server+"\x00"+b.name) })
	return out
}

// shadowFindings: prose of this item that names another server's tool is
// low; with words that instruct the model about it, it is shadowing (high).
func shadowFindings(path, norm string, others []otherTool) []Finding {
	var out []Finding
	for _, o := range others {
		at := mentions(norm, o.name)
		if at < 0 {
			continue
		}
		from, to := max(at-120, 0), min(at+len(o.name)+120, len(norm))
		if w := instructing.FindString(norm[from:to]); w != "" {
			ctxFrom, ctxTo := max(at-50, 0), min(at+len(o.name)+50, len(norm))
			out = append(out, Finding{High, RuleShadowing, path, fmt.Sprintf(
				"names tool %q of server %q and tells the model how to use it (%q): %s",
				printable(o.name), printable(o.server), w, quote(norm[ctxFrom:ctxTo]))})
			continue
		}
		out = append(out, Finding{Low, RuleOtherTool, path, fmt.Sprintf("names tool %q of server %q", printable(o.name), printable(o.server))})
	}
	return out
}

// mentions is where norm (normalized) names the tool as a word, or -1. A
// name without a separator or capital (search, fetch) counts only quoted
// or followed by "tool", since it is also a plain word.
func mentions(norm, name string) int {
	lower := strings.ToLower(name)
	plainWord := !strings.ContainsAny(name, "_-.") && strings.ToLower(name) == name
	for i := 0; ; {
		j := strings.Index(norm[i:], lower)
		if j < 0 {
			return -1
		}
		at, end := i+j, i+j+len(lower)
		i = at + 1
		if at > 0 && identChar(norm[at-1]) || end < len(norm) && (identChar(norm[end]) || norm[end] == '.' && end+1 < len(norm) && identChar(norm[end+1])) {
			continue
		}
		if !plainWord {
			return at
		}
		quoted := at > 0 && strings.ContainsRune("`'\"", rune(norm[at-1]))
		if quoted || strings.HasPrefix(norm[end:], " tool") {
			return at
		}
	}
}

func identChar(c byte) bool {
	return c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
}

// Clash is one tool name that more than one server exposes to the same
// host: the model cannot tell which it calls.
type Clash struct {
	Tool    string
	Servers []string // sorted
}

// Clashes are the tool names that collide among servers (server → tool
// names as the host sees them: one daemon config's or one host file's
// servers), sorted by name.
func Clashes(servers map[string][]string) []Clash {
	by := map[string][]string{}
	for server, names := range servers {
		for _, n := range names {
			if !slices.Contains(by[n], server) {
				by[n] = append(by[n], server)
			}
		}
	}
	var out []Clash
	for name, ss := range by {
		if len(ss) > 1 {
			slices.Sort(ss)
			out = append(out, Clash{name, ss})
		}
	}
	slices.SortFunc(out, func(a, b Clash) int { return strings.Compare(a.Tool, b.Tool) })
	return out
}

// Prefixes proposes a --tool-prefix (policy mcp.tool-prefix) for every
// server that has a clash, made from the server's name (fs-notes →
// fs_notes_), such that no two names the host sees collide any more.
func Prefixes(servers map[string][]string) map[string]string {
	clashes := Clashes(servers)
	if len(clashes) == 0 {
		return nil
	}
	var involved []string
	for _, c := range clashes {
		for _, s := range c.Servers {
			if !slices.Contains(involved, s) {
				involved = append(involved, s)
			}
		}
	}
	slices.Sort(involved)
	taken := map[string]bool{} // every name the host would see
	for s, names := range servers {
		if !slices.Contains(involved, s) {
			for _, n := range names {
				taken[n] = true
			}
		}
	}
	out := map[string]string{}
	for _, s := range involved {
		base := prefixBase(s)
		for i := 1; ; i++ {
			p := base + "_"
			if i > 1 {
				p = base + strconv.Itoa(i) + "_"
			}
			if !prefixCollides(p, servers[s], taken) {
				out[s] = p
				for _, n := range servers[s] {
					taken[p+n] = true
				}
				break
			}
		}
	}
	return out
}

func prefixCollides(p string, names []string, taken map[string]bool) bool {
	for _, n := range names {
		if taken[p+n] {
			return true
		}
	}
	return false
}

// prefixBase is a server's name as a prefix: no npm scope, no "server" or
// "mcp" around it, letters and digits joined by _.
func prefixBase(server string) string {
	s := strings.ToLower(server)
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	for _, p := range []string{"mcp-server-", "server-", "mcp-"} {
		s = strings.TrimPrefix(s, p)
	}
	for _, p := range []string{"-mcp-server", "-server", "-mcp"} {
		s = strings.TrimSuffix(s, p)
	}
	var b strings.Builder
	for _, r := range s {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
		} else if b.Len() > 0 && !strings.HasSuffix(b.String(), "_") {
			b.WriteByte('_')
		}
	}
	base := strings.TrimSuffix(b.String(), "_")
	if len(base) > 20 {
		base = strings.TrimSuffix(base[:20], "_")
	}
	if base == "" {
		base = "s"
	}
	return base
}

// String says which servers clash on the name.
func (c Clash) String() string {
	return fmt.Sprintf("tool %q is exposed by %s", c.Tool, strings.Join(c.Servers, ", "))
}
