package pins

import (
	"maps"
	"slices"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/contract"
	"github.com/mcpsandbox/mcpsandbox/contract/scan"
	"github.com/mcpsandbox/mcpsandbox/lock"
)

// neighbours is the scanner's context with the tools the lock f pins of
// the other servers the same host sees, as the host sees them (their
// prefix before each name), by their display names.
func (r *Rule) neighbours(f *lock.File) scan.Context {
	ctx := r.o.Scan
	ctx.Server = r.o.Name
	ctx.Others = nil
	for id, prefix := range r.o.Neighbours {
		s := f.Servers[id]
		if id == r.o.ID || s == nil || len(s.Contract.Tools) == 0 {
			continue
		}
		name := s.Name
		if name == "" {
			name = id
		}
		if ctx.Others == nil {
			ctx.Others = map[string][]string{}
		}
		for _, tool := range slices.Sorted(maps.Keys(s.Contract.Tools)) {
			ctx.Others[name] = append(ctx.Others[name], prefix+tool)
		}
	}
	return ctx
}

// scanPage scans the items of a page that are pinned or held: a high
// finding holds an item that would be pinned at first sight, or is new,
// as a finding. What passes as pinned and unchanged is not scanned again.
func (r *Rule) scanPage(page map[string]seen) {
	var ctx *scan.Context
	for key, s := range page {
		if !s.pin && s.reason == "" {
			continue
		}
		if ctx == nil {
			ctx = r.pageContext(page)
		}
		s.findings = scan.Item(s.it, *ctx)
		if scan.Holds(s.findings) && (s.pin || s.reason == lock.ReasonNew) {
			s.pin, s.reason = false, lock.ReasonFinding
		}
		page[key] = s
	}
}

// pageContext is the scanner's context for a page: its own tools are the
// approved ones and the page's, so that a sibling named is no shadowing.
func (r *Rule) pageContext(page map[string]seen) *scan.Context {
	ctx := r.scanCtx
	own := map[string]bool{}
	for key := range r.approved.Tools {
		own[key] = true
	}
	for _, s := range page {
		if s.it.Kind == contract.Tool {
			own[s.it.Key] = true
		}
	}
	ctx.OwnTools = slices.Sorted(maps.Keys(own))
	return &ctx
}

// heldRules names the rules of the high findings that hold an item.
func heldRules(findings []scan.Finding) string {
	var rules []string
	for _, f := range findings {
		if f.Severity >= scan.High && !slices.Contains(rules, f.Rule) {
			rules = append(rules, f.Rule)
		}
	}
	return strings.Join(rules, ", ")
}

// storedRules reads the rules back from findings as a lock stores them
// (scan.Strings: "high: FIELD REASON [RULE]").
func storedRules(findings []string) string {
	var rules []string
	for _, f := range findings {
		i, j := strings.LastIndexByte(f, '['), strings.LastIndexByte(f, ']')
		if strings.HasPrefix(f, scan.High.String()+":") && i >= 0 && j > i && !slices.Contains(rules, f[i+1:j]) {
			rules = append(rules, f[i+1:j])
		}
	}
	return strings.Join(rules, ", ")
}

// maxLoggedFindings bounds the log lines one page's findings make.
const maxLoggedFindings = 16

// logFindings says what the scanner found in items pinned at first sight
// (medium and low findings: they hold nothing), one line per item, at
// most maxLoggedFindings of them.
func (r *Rule) logFindings(pinned []seen) {
	n := 0
	for _, p := range pinned {
		if len(p.findings) == 0 {
			continue
		}
		if n++; n > maxLoggedFindings {
			continue
		}
		name := contract.ItemName(p.it.Kind, p.it.Key)
		r.o.Log.Warn("MCP server's "+name+" pinned with scanner findings of medium or low severity, which hold nothing", "item", name, "findings", scan.Strings(p.findings), "lock", r.o.Path)
	}
	if n > maxLoggedFindings {
		r.o.Log.Warn("more items pinned with scanner findings than logged", "more", n-maxLoggedFindings, "lock", r.o.Path)
	}
}
