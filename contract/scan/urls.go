package scan

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// urlPattern finds URLs in prose; the host is read by policy.URLHosts, as
// the egress allowlist reads a server's URL arguments.
var urlPattern = regexp.MustCompile(`(?i)\b(https?|wss?|ftp)://[^\s<>"'` + "`" + `)\]}|\\]+`)

// reserved are names no one can be sent to (RFC 2606, RFC 6761): examples
// in descriptions, never destinations.
func reserved(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, d := range []string{"example.com", "example.net", "example.org", "example", "test", "invalid"} {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}

// hostRules are the server's egress rules; lists that do not parse allow
// nothing (Validate has refused them before a server runs).
func hostRules(ctx Context) policy.HostRules {
	r, err := policy.ParseHostRules(ctx.AllowHosts, ctx.DenyHosts)
	if err != nil {
		return policy.HostRules{}
	}
	return r
}

// urlFindings names each URL in s whose host the rules do not allow.
func urlFindings(path, s string, rules policy.HostRules) []Finding {
	var out []Finding
	seen := map[string]bool{}
	if !strings.Contains(s, "://") {
		return nil
	}
	for _, u := range urlPattern.FindAllString(s, 8) {
		u = strings.TrimRight(u, ".,;:!?")
		specs, ok, err := policy.URLHosts(u)
		if !ok || err != nil {
			continue
		}
		for _, spec := range specs {
			if seen[spec] || allowedSpec(spec, rules) {
				continue
			}
			seen[spec] = true
			h, _ := policy.ParseHostSpec(spec)
			if h.Name != "" && reserved(h.Name) {
				continue
			}
			out = append(out, Finding{Medium, RuleURLHost, path, fmt.Sprintf(
				"names %s, whose host %s the server's egress allowlist does not name: the model may be sent there with what it knows",
				quote(clip(u, 80)), spec)})
		}
	}
	return out
}

// allowedSpec reports whether the rules allow HOST:PORT spec.
func allowedSpec(spec string, rules policy.HostRules) bool {
	h, err := policy.ParseHostSpec(spec)
	if err != nil || len(h.Ports) != 1 {
		return false
	}
	if h.IsAddr() {
		ok, _ := rules.DecideAddr(h.Addrs.Addr(), h.Ports[0])
		return ok
	}
	ok, _ := rules.DecideName(h.Name, h.Ports[0])
	return ok
}

// quote is s printable and quoted.
func quote(s string) string { return `"` + printable(s) + `"` }
