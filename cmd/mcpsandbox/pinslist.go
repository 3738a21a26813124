package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/contract"
	"github.com/mcpsandbox/mcpsandbox/lock"
)

// pinsList prints every server of the lock in short, or NAME's every item.
func pinsList(p pinsRun) int {
	f, ids, status, ok := p.open("list")
	if !ok {
		return status
	}
	if len(ids) == 0 {
		fmt.Fprintf(p.std.Out, "%s pins no server yet: a server's contract is pinned when its first session lists it (docs/pins.md)\n", p.path)
		return exitOK
	}
	fmt.Fprintf(p.std.Out, "lock %s\n", p.path)
	for _, id := range ids {
		s := f.Servers[id]
		writeServerHead(p.std.Out, id, s, p.name != "")
		if p.name == "" {
			fmt.Fprintf(p.std.Out, "    pinned   %s\n", pinnedCounts(&s.Contract))
			if held := heldNames(s); len(held) > 0 {
				fmt.Fprintf(p.std.Out, "    held     %s\n", strings.Join(held, ", "))
			}
			continue
		}
		writeItems(p.std.Out, s)
	}
	if p.name == "" {
		writeClashes(p.std.Out, f)
	}
	return exitOK
}

// writeServerHead is a server's name, id and package; full adds what
// a reviewer of one server wants besides (integrity, publish time, ...).
func writeServerHead(w io.Writer, id string, s *lock.Server, full bool) {
	if name := displayName(id, s); name != id {
		fmt.Fprintf(w, "%s (%s)\n", name, id)
	} else {
		fmt.Fprintln(w, id)
	}
	pkg := s.Package
	if pkg == nil {
		fmt.Fprintln(w, "    package  none recorded (no npm package)")
		return
	}
	fmt.Fprintf(w, "    package  %s@%s, %s\n", pkg.Name, pkg.Version, builtBy(pkg.Provenance))
	if !full {
		return
	}
	line := func(label, value string) {
		if value != "" {
			fmt.Fprintf(w, "    %-8s %s\n", label, value)
		}
	}
	line("integrity", pkg.Integrity)
	if !pkg.Published.IsZero() {
		line("published", pkg.Published.UTC().Format(time.RFC3339))
	}
	line("registry", pkg.Registry)
	line("mcpName", pkg.MCPName)
	line("install", strings.Join(pkg.InstallHosts, ", "))
}

// builtBy names the publisher's provenance identity, if the registry had one.
func builtBy(prov *lock.Provenance) string {
	if prov == nil || prov.Repository == "" {
		return "no provenance"
	}
	s := "built by " + prov.Repository
	if prov.Workflow != "" {
		s += " " + prov.Workflow
	}
	if prov.Commit != "" {
		s += " at " + prov.Commit[:min(12, len(prov.Commit))]
	}
	return s
}

// pinnedCounts says how many items of each kind a contract pins.
func pinnedCounts(c *lock.Contract) string {
	n := map[contract.Kind]int{}
	for _, e := range entries(c) {
		n[e.Kind]++
	}
	plural := func(k int, one, many string) string {
		switch k {
		case 0:
			return "no " + many
		case 1:
			return "1 " + one
		}
		return fmt.Sprintf("%d %s", k, many)
	}
	parts := []string{plural(n[contract.Tool], "tool", "tools"), plural(n[contract.Prompt], "prompt", "prompts"), plural(n[contract.Resource], "resource", "resources")}
	if k := n[contract.ResourceTemplate]; k > 0 {
		parts = append(parts, plural(k, "resource template", "resource templates"))
	}
	for _, k := range []contract.Kind{contract.Instructions, contract.ServerInfo, contract.Capabilities} {
		if n[k] > 0 {
			parts = append(parts, string(k))
		}
	}
	return strings.Join(parts, ", ")
}

// writeItems lists a server's every pinned item with its hash, then what is held.
func writeItems(w io.Writer, s *lock.Server) {
	fmt.Fprintf(w, "    pinned   %s\n", pinnedCounts(&s.Contract))
	for _, e := range entries(&s.Contract) {
		fmt.Fprintf(w, "        %s  %s\n", e.Name(), e.Item.Hash)
	}
	held := entries(&s.Pending)
	if len(held) == 0 {
		fmt.Fprintln(w, "    held     nothing")
		return
	}
	fmt.Fprintf(w, "    held     %d\n", len(held))
	for _, e := range held {
		seen := ""
		if !e.Seen.IsZero() {
			seen = ", seen " + e.Seen.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "        %s%s\n", why(e), seen)
		for _, finding := range e.Findings {
			fmt.Fprintf(w, "            finding: %s\n", finding)
		}
	}
}
