package scan

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/mcpsandbox/mcpsandbox/contract"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Context is what the scanner knows beyond the item: the server's egress
// lists and its neighbours.
type Context struct {
	AllowHosts, DenyHosts []string // the server's policy.AllowHosts and DenyHosts (host specs)

	Server     string              // this server's name among Others' (its daemon config or host file entry)
	ToolPrefix string              // the server's --tool-prefix: the host sees its tools as ToolPrefix+name
	OwnTools   []string            // this server's tool names, as it names them: a sibling named is no shadowing
	Others     map[string][]string // the other servers of the same daemon config or host file → tool names as the host sees them
}

// maxFindings bounds what one item can make the scanner say.
const maxFindings = 32

// Item scans one contract item: every string of its text (keys too) for
// hidden characters, directives and sensitive paths, its prose
// (descriptions, titles, instructions) for URLs the egress allowlist does
// not name and for other servers' tools, and a tool's name for a clash.
// Findings are sorted, high first.
func Item(it contract.Item, ctx Context) []Finding {
	var v any
	dec := json.NewDecoder(bytes.NewReader(it.Text))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return []Finding{{High, RuleUnreadable, string(it.Kind), "is no JSON the scanner can read: " + err.Error()}}
	}
	s := &scanner{ctx: ctx, rules: hostRules(ctx), others: otherTools(ctx)}
	root := ""
	if _, isString := v.(string); isString {
		root = string(it.Kind)
	}
	s.walk(root, "", v)
	if it.Kind == contract.Tool {
		s.clash(it.Key)
	}
	return bound(s.out)
}

// Text scans one string as Item scans the prose of an item (field names
// where it was found).
func Text(field, text string, ctx Context) []Finding {
	s := &scanner{ctx: ctx, rules: hostRules(ctx), others: otherTools(ctx)}
	s.text(field, text, true)
	return bound(s.out)
}

type scanner struct {
	ctx    Context
	rules  policy.HostRules
	others []otherTool
	out    []Finding
}

// walk scans v found at path under the member named key.
func (s *scanner) walk(path, key string, v any) {
	switch v := v.(type) {
	case string:
		prose := key == "description" || key == "title" || key == "" && path != ""
		s.text(path, v, prose)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			sub := join(path, k)
			s.text(sub, k, false) // a key is read by the model too
			if k == "$schema" || k == "$id" || k == "$ref" {
				continue
			}
			s.walk(sub, k, v[k])
		}
	case []any:
		for i, e := range v {
			s.walk(path+"["+strconv.Itoa(i)+"]", key+"[]", e)
		}
	}
}

func join(path, key string) string {
	key = printable(key)
	if path == "" {
		return key
	}
	return path + "." + key
}

// text scans one string; prose is read by the model as guidance.
func (s *scanner) text(path, text string, prose bool) {
	if path == "" {
		path = "(text)"
	}
	s.out = append(s.out, invisibleFindings(path, text)...)
	norm := normalize(text)
	ds := findDirectives(norm)
	for _, d := range ds {
		s.out = append(s.out, Finding{d.d.severity, RuleDirective, path, fmt.Sprintf("says %s (%s), which %s", quote(clip(d.text, 80)), d.d.id, d.d.why)})
	}
	for _, p := range findSensitivePaths(norm) {
		f := Finding{Medium, RuleSensitive, path, fmt.Sprintf("names %s (%s)", quote(p.text), p.what)}
		if p.ordered || p.read && len(ds) > 0 {
			f.Severity = High
			f.Reason += " and tells the model to read or pass it on"
		}
		s.out = append(s.out, f)
	}
	if prose {
		s.out = append(s.out, urlFindings(path, text, s.rules)...)
		s.out = append(s.out, shadowFindings(path, norm, s.others)...)
	}
}

// clash: another server exposes the tool's name as the host sees it.
func (s *scanner) clash(key string) {
	name := s.ctx.ToolPrefix + key
	if !s.clashes(name) {
		return
	}
	all := map[string][]string{}
	for server, names := range s.ctx.Others {
		all[server] = names
	}
	self := s.ctx.Server
	if self == "" {
		self = "this server"
	}
	var own []string
	for _, n := range append(s.ctx.OwnTools, key) {
		own = append(own, s.ctx.ToolPrefix+n)
	}
	all[self] = own
	prefixes := Prefixes(all)
	for _, c := range Clashes(all) {
		if c.Tool != name || !slices.Contains(c.Servers, self) {
			continue
		}
		var with []string
		for _, srv := range c.Servers {
			if srv != self {
				with = append(with, strconv.Quote(srv))
			}
		}
		s.out = append(s.out, Finding{Medium, RuleToolClash, "name", fmt.Sprintf(
			"%q is also a tool of server %s, so the model may call the wrong one: separate them with --tool-prefix %s (policy mcp.tool-prefix)",
			printable(name), joinList(with), prefixes[self])})
	}
}

// clashes reports whether another server has a tool named name.
func (s *scanner) clashes(name string) bool {
	for server, names := range s.ctx.Others {
		if server != s.ctx.Server && slices.Contains(names, name) {
			return true
		}
	}
	return false
}

func joinList(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return fmt.Sprintf("%s and %s", joinComma(items[:len(items)-1]), items[len(items)-1])
}

func joinComma(items []string) string {
	out := items[0]
	for _, it := range items[1:] {
		out += ", " + it
	}
	return out
}

// bound sorts findings (high first, then by field) and keeps at most
// maxFindings, saying how many more there were.
func bound(fs []Finding) []Finding {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(b.Severity, a.Severity), cmp.Compare(a.Field, b.Field), cmp.Compare(a.Rule, b.Rule))
	})
	if len(fs) <= maxFindings {
		return fs
	}
	more := len(fs) - maxFindings + 1
	fs = append(fs[:maxFindings-1:maxFindings-1], Finding{Low, "more", "(item)", fmt.Sprintf("%d more findings left out", more)})
	return fs
}
