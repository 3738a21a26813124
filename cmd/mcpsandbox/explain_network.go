package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/resolve"
)

// egressWhat says what network mode egress gives, as the sandbox's
// description says it of none and host.
const egressWhat = "a network of its own, reaching only the hosts below"

// networkLines are the network mode with where it came from and, for
// egress, every allowed and denied host with who gave it; lists a mode
// leaves out of force are shown as such.
func (e explanation) networkLines() []string {
	p := e.p
	mode := e.d.Network
	if p.Net == policy.NetEgress {
		mode = policy.NetEgress + ": " + egressWhat
	}
	lines := []string{mode + "  (" + e.netSource() + ")"}
	allow, deny := e.r.Hosts("AllowHosts"), e.r.Hosts("DenyHosts")
	if len(allow)+len(deny) == 0 {
		return lines
	}
	indent := ""
	if p.Net != policy.NetEgress {
		lines = append(lines, "not in force under "+p.Net+":")
		indent = "  "
	}
	w := 0
	for _, h := range append(allow, deny...) {
		w = max(w, len(hostOf(h.Spec)))
	}
	entry := func(kind, field string, h resolve.HostEntry) string {
		return fmt.Sprintf("%s%-5s %-*s  %-8s  (%s)", indent, kind, w, hostOf(h.Spec), portsOf(h.Spec, field == "DenyHosts"), e.hostSource(field, h))
	}
	for _, h := range allow {
		lines = append(lines, entry("allow", "AllowHosts", h))
	}
	for _, h := range deny {
		lines = append(lines, entry("deny", "DenyHosts", h))
	}
	if p.Net != policy.NetEgress {
		return lines
	}
	resolver := "the nameservers of the host's /etc/resolv.conf"
	if p.Resolver != "" {
		resolver, _ = policy.ResolverAddress(p.Resolver)
	}
	return append(lines,
		"each connection checked and dialled by mcpsandbox, names resolved with",
		"  "+resolver+e.from("Resolver"),
		"never dialled, unless an entry names the address: loopback, link-local,",
		"  private (RFC 1918, ULA) and this host's own addresses")
}

// netSource is where the mode came from: egress that no file or flag set
// as a mode was selected by the command line's --allow-host.
func (e explanation) netSource() string {
	if _, inFile := e.r.Origin["Net"]; e.p.Net == policy.NetEgress && !inFile && !e.r.Given["Net"] {
		return flagOf("AllowHosts")
	}
	return e.source("Net")
}

func (e explanation) hostSource(field string, h resolve.HostEntry) string {
	switch h.From.Kind {
	case resolve.Given:
		return flagOf(field)
	case resolve.Builtin:
		return h.From.Name
	}
	return h.From.Name + ":" + strconv.Itoa(h.Line)
}

// hostOf is what an entry names, its port left out; portsOf its ports.
func hostOf(spec string) string {
	h, err := policy.ParseHostSpec(spec)
	switch {
	case err != nil:
		return spec
	case h.Name == "*":
		return "* (any public host)"
	case h.IsAddr() && h.Addrs.IsSingleIP():
		return h.Addrs.Addr().String()
	case h.IsAddr():
		return h.Addrs.String()
	}
	return h.Name
}

func portsOf(spec string, deny bool) string {
	allow, denied := []string{spec}, []string(nil)
	if deny {
		allow, denied = nil, allow
	}
	rules, err := policy.ParseHostRules(allow, denied)
	if err != nil {
		return ""
	}
	h := append(rules.Allow, rules.Deny...)[0]
	if len(h.Ports) == 0 {
		return "any port"
	}
	ports := make([]string, len(h.Ports))
	for i, p := range h.Ports {
		ports[i] = strconv.Itoa(int(p))
	}
	return strings.Join(ports, ", ")
}
