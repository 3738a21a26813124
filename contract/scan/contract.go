package scan

import (
	"github.com/mcpsandbox/mcpsandbox/contract"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// ForPolicy is the Context a server's policy gives: its egress lists and
// its tool prefix. The caller adds Server and Others when it knows the
// server's neighbours (a daemon config, a host file).
func ForPolicy(p *policy.Policy) Context {
	return Context{AllowHosts: p.AllowHosts, DenyHosts: p.DenyHosts, ToolPrefix: p.ToolPrefix}
}

// Contract scans every item of one server's contract, by item name
// ("tool:write_file"); items without a finding are left out. OwnTools is
// taken from the contract's tools when ctx has none.
func Contract(items []contract.Item, ctx Context) map[string][]Finding {
	if ctx.OwnTools == nil {
		for _, it := range items {
			if it.Kind == contract.Tool {
				ctx.OwnTools = append(ctx.OwnTools, it.Key)
			}
		}
	}
	out := map[string][]Finding{}
	for _, it := range items {
		if fs := Item(it, ctx); len(fs) > 0 {
			out[it.Name()] = fs
		}
	}
	return out
}
