package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/contract"
	"github.com/mcpsandbox/mcpsandbox/contract/scan"
	"github.com/mcpsandbox/mcpsandbox/lock"
)

// findings are what the scanner says of a held entry now, with what the
// relay stored when it held it (made with the server's own policy), each
// once, high first. The lock's other servers are the scanner's
// neighbours: a daemon config's servers, or those your hosts run. Without
// --policy the egress allowlist is unknown here, so a URL host is judged
// only by what the relay stored.
func (p pinsRun) findings(f *lock.File, id string, e entry) []string {
	if e.Reason == removed {
		return e.Findings
	}
	ctx := scan.Context{Server: displayName(id, f.Servers[id]), Others: toolsOf(f, id)}
	if p.policy != nil {
		ctx = scan.ForPolicy(p.policy)
		ctx.Server, ctx.Others, ctx.ToolPrefix = displayName(id, f.Servers[id]), toolsOf(f, id), ""
	}
	s := f.Servers[id]
	ctx.OwnTools = slices.Sorted(maps.Keys(s.Contract.Tools))
	for key := range s.Pending.Tools {
		ctx.OwnTools = append(ctx.OwnTools, key)
	}
	var out []string
	for _, finding := range scan.Item(e.Item, ctx) {
		if finding.Rule != scan.RuleURLHost || p.policy != nil {
			out = append(out, finding.String())
		}
	}
	for _, stored := range e.Findings {
		if !slices.Contains(out, stored) {
			out = append(out, stored)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return cmp.Compare(severityRank(a), severityRank(b)) })
	return out
}

// severityRank orders finding lines high first.
func severityRank(line string) int {
	for i, s := range []scan.Severity{scan.High, scan.Medium, scan.Low} {
		if strings.HasPrefix(line, s.String()+":") {
			return i
		}
	}
	return 3
}

// toolsOf is every server of the lock but id, by display name, with the
// tools the lock pins of it, as the servers name them.
func toolsOf(f *lock.File, except string) map[string][]string {
	out := map[string][]string{}
	for id, s := range f.Servers {
		if id != except && len(s.Contract.Tools) > 0 {
			out[displayName(id, s)] = slices.Sorted(maps.Keys(s.Contract.Tools))
		}
	}
	return out
}

// writeClashes says which tool names two servers of the lock share, and
// the --tool-prefix that separates them: a host that runs them together
// cannot tell which one the model calls.
func writeClashes(w io.Writer, f *lock.File) {
	servers := toolsOf(f, "")
	clashes := scan.Clashes(servers)
	if len(clashes) == 0 {
		return
	}
	fmt.Fprintln(w, "tool names two servers share (as the servers name them: a host that runs both may call the wrong one):")
	var involved []string
	for _, c := range clashes {
		fmt.Fprintf(w, "    %s  %s\n", contract.ItemName(contract.Tool, c.Tool), strings.Join(c.Servers, ", "))
		for _, s := range c.Servers {
			if !slices.Contains(involved, s) {
				involved = append(involved, s)
			}
		}
	}
	slices.Sort(involved)
	prefixes := scan.Prefixes(servers)
	var with []string
	for _, s := range involved {
		with = append(with, fmt.Sprintf("%s --tool-prefix %s", s, prefixes[s]))
	}
	fmt.Fprintf(w, "separate them with a prefix (policy mcp.tool-prefix) unless one is set: %s\n", strings.Join(with, "; "))
}
