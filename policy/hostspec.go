package policy

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// DefaultPorts are the ports a host spec without one allows: HTTPS and HTTP.
var DefaultPorts = []uint16{443, 80}

// HostSpec is one entry of --allow-host or --deny-host:
//
//	HOST[:PORT]          api.github.com, api.github.com:8443
//	*.DOMAIN[:PORT]      *.slack.com: any name below slack.com, not slack.com itself
//	*[:PORT]             any public host name (the SSRF floor still applies)
//	IP[/BITS][:PORT]     192.0.2.7, 198.51.100.0/24:5432, [2001:db8::1]:443
//
// A spec without a port allows DefaultPorts; as a deny entry it denies
// every port (ParseHostRules), since a host denied is meant gone whatever
// the port.
type HostSpec struct {
	Text  string       // as given
	Name  string       // lower case, no trailing dot; "*.domain" or "*"; "" for an address
	Addrs netip.Prefix // the address or range; valid only when Name is ""
	Ports []uint16     // empty only for a deny entry without a port: every port
}

// ParseHostSpec reads one spec; its error says what is wrong and shows the
// accepted forms.
func ParseHostSpec(s string) (HostSpec, error) {
	h := HostSpec{Text: s}
	host, port, err := splitHostPort(strings.TrimSpace(s))
	if err != nil {
		return h, err
	}
	if port == "" {
		h.Ports = slices.Clone(DefaultPorts)
	} else {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || n == 0 {
			return h, fmt.Errorf("port %q is not a number from 1 to 65535", port)
		}
		h.Ports = []uint16{uint16(n)}
	}
	if p, ok := parseAddrOrPrefix(host); ok {
		h.Addrs = p
		return h, nil
	}
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	if name == "*" {
		h.Name = name
		return h, nil
	}
	if err := checkHostName(strings.TrimPrefix(name, "*.")); err != nil {
		return h, err
	}
	h.Name = name
	return h, nil
}

// splitHostPort splits "host:port", "[v6]:port", "[v6/bits]:port" and a
// bare host or IPv6 address (which has colons but no brackets).
func splitHostPort(s string) (host, port string, err error) {
	if s == "" {
		return "", "", errors.New("is empty")
	}
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", "", errors.New("has [ without ]")
		}
		host, rest := s[1:end], s[end+1:]
		if rest == "" {
			return host, "", nil
		}
		if !strings.HasPrefix(rest, ":") {
			return "", "", fmt.Errorf("has %q after ]: write [ADDRESS]:PORT", rest)
		}
		return host, rest[1:], nil
	}
	if strings.Count(s, ":") > 1 {
		return s, "", nil // a bare IPv6 address or range
	}
	host, port, _ = strings.Cut(s, ":")
	if host == "" {
		return "", "", errors.New("has no host before the port")
	}
	if strings.Contains(s, ":") && port == "" {
		return "", "", errors.New("has : but no port after it")
	}
	return host, port, nil
}

// hasPort reports whether spec s (valid) gives a port.
func hasPort(s string) bool {
	_, port, _ := splitHostPort(strings.TrimSpace(s))
	return port != ""
}

func parseAddrOrPrefix(s string) (netip.Prefix, bool) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, false
		}
		return p.Masked(), true
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, false
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), true
}

// checkHostName accepts DNS names: labels of letters, digits and hyphens
// (not at either end), 1–63 bytes each, 253 in all.
func checkHostName(name string) error {
	if name == "" || len(name) > 253 {
		return fmt.Errorf("%q is no host name", name)
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("%q is no host name (label %q)", name, label)
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("%q is no host name (%q in label %q; a wildcard is only *. at the start)", name, c, label)
			}
		}
	}
	return nil
}

// HostSpecForms is the accepted syntax, for messages' fixes.
const HostSpecForms = "use HOST[:PORT], *.DOMAIN[:PORT], * (any public host) or IP[/BITS][:PORT] (IPv6 in brackets with a port); without a port, 443 and 80"

// IsAddr reports whether h names an address or range rather than names.
func (h HostSpec) IsAddr() bool { return h.Name == "" }

// MatchName reports whether h covers the host name (lower case, no
// trailing dot) on port.
func (h HostSpec) MatchName(name string, port uint16) bool {
	if h.Name == "" || !h.matchPort(port) {
		return false
	}
	switch {
	case h.Name == "*":
		return true
	case strings.HasPrefix(h.Name, "*."):
		return strings.HasSuffix(name, h.Name[1:])
	}
	return name == h.Name
}

// MatchAddr reports whether h names addr (as an address or range, not a
// name) on port.
func (h HostSpec) MatchAddr(addr netip.Addr, port uint16) bool {
	return h.Name == "" && h.Addrs.Contains(addr.Unmap()) && h.matchPort(port)
}

func (h HostSpec) matchPort(port uint16) bool {
	return len(h.Ports) == 0 || slices.Contains(h.Ports, port)
}

// HostRules is the egress allowlist; deny wins.
type HostRules struct {
	Allow, Deny []HostSpec
}

// ParseHostRules parses the policy's lists; Validate has checked them.
func ParseHostRules(allow, deny []string) (HostRules, error) {
	var r HostRules
	for _, s := range allow {
		h, err := ParseHostSpec(s)
		if err != nil {
			return r, fmt.Errorf("allow-host %q %v", s, err)
		}
		r.Allow = append(r.Allow, h)
	}
	for _, s := range deny {
		h, err := ParseHostSpec(s)
		if err != nil {
			return r, fmt.Errorf("deny-host %q %v", s, err)
		}
		if !hasPort(s) {
			h.Ports = nil
		}
		r.Deny = append(r.Deny, h)
	}
	return r, nil
}

// DecideName reports whether a connection to name:port is allowed, and the
// spec that decided (nil: no allow entry matched).
func (r HostRules) DecideName(name string, port uint16) (bool, *HostSpec) {
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	for i := range r.Deny {
		if r.Deny[i].MatchName(name, port) {
			return false, &r.Deny[i]
		}
	}
	for i := range r.Allow {
		if r.Allow[i].MatchName(name, port) {
			return true, &r.Allow[i]
		}
	}
	return false, nil
}

// DecideAddr is DecideName for a connection to an IP literal.
func (r HostRules) DecideAddr(addr netip.Addr, port uint16) (bool, *HostSpec) {
	for i := range r.Deny {
		if r.Deny[i].MatchAddr(addr, port) {
			return false, &r.Deny[i]
		}
	}
	for i := range r.Allow {
		if r.Allow[i].MatchAddr(addr, port) {
			return true, &r.Allow[i]
		}
	}
	return false, nil
}

// NamesAddr reports whether an allow entry names addr itself (any port):
// such an address passes the SSRF floor.
func (r HostRules) NamesAddr(addr netip.Addr) bool {
	for _, h := range r.Allow {
		if h.Name == "" && h.Addrs.Contains(addr.Unmap()) {
			return true
		}
	}
	return false
}

// Ports are the distinct ports any allow entry allows, ascending.
func (r HostRules) Ports() []uint16 {
	var ports []uint16
	for _, h := range r.Allow {
		for _, p := range h.Ports {
			if !slices.Contains(ports, p) {
				ports = append(ports, p)
			}
		}
	}
	slices.Sort(ports)
	return ports
}

// AllowFlag is the --allow-host that would allow name:port, for a denied
// connection's message.
func AllowFlag(host string, port uint16) string {
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if slices.Contains(DefaultPorts, port) {
		return "--allow-host " + host
	}
	return "--allow-host " + host + ":" + strconv.Itoa(int(port))
}
