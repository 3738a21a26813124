package policy

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// How the network mode is chosen. A policy is built in levels: each file
// of an extends chain, base first, then the caller's overrides (run's
// flags). A level that adds allow-hosts items selects egress unless it
// sets the mode itself, so a user's --allow-host over a built-in that
// says host narrows it; a level that sets the mode alone sets it (the
// lists below it are kept, and not in force under none or host); a level
// that adds allow-hosts and says none or host contradicts itself.

// SelectNet applies one level's say on the mode to p, whose fields
// already hold that level's values: modeSet, the level set Net;
// hostsAdded, it added AllowHosts items. It reports whether it selected
// egress, and a contradiction as an error about Net.
func (p *Policy) SelectNet(modeSet, hostsAdded bool) (selected bool, err error) {
	if !hostsAdded {
		return false, nil
	}
	if !modeSet {
		p.Net = NetEgress
		return true, nil
	}
	if p.Net != NetNone && p.Net != NetHost {
		return false, nil // egress already, or no mode at all: Validate says so
	}
	reach := "the host's whole network"
	if p.Net == NetNone {
		reach = "no network"
	}
	return false, &field.Error{Field: "Net", Value: p.Net,
		Problem: "contradicts {AllowHosts}, which selects network mode egress (only the hosts it names)",
		Fix:     "drop {Net} to reach only those hosts, or drop {AllowHosts} for " + reach}
}

// validateNet checks the network fields (hostsUnknown: see validate).
func (p *Policy) validateNet(hostsUnknown bool) error {
	switch p.Net {
	case NetNone, NetHost, NetEgress:
	default:
		return &field.Error{Field: "Net", Value: strconv.Quote(p.Net), Problem: "is no network mode",
			Fix: "use none, host or egress (only the hosts {AllowHosts} names; giving it selects egress)"}
	}
	for _, list := range []struct {
		field string
		specs []string
	}{{"AllowHosts", p.AllowHosts}, {"DenyHosts", p.DenyHosts}} {
		for _, s := range list.specs {
			if _, err := ParseHostSpec(s); err != nil {
				return hostSpecError(list.field, s, err)
			}
		}
	}
	if p.Resolver != "" {
		if _, err := ResolverAddress(p.Resolver); err != nil {
			return &field.Error{Field: "Resolver", Value: strconv.Quote(p.Resolver), Err: err,
				Fix: "use IP, IP:PORT, [IPv6]:PORT or HOST:PORT (port 53 if none), or \"\" for the nameservers of the host's /etc/resolv.conf"}
		}
	}
	switch {
	case p.Net == NetEgress && len(p.AllowHosts) == 0 && !hostsUnknown:
		return &field.Error{Field: "Net", Value: NetEgress, Problem: "with no {AllowHosts} reaches nothing",
			Fix: "name the hosts the server needs with {AllowHosts} (which selects egress by itself), or use {Net} none"}
	case p.Net == NetHost && len(p.DenyHosts) > 0:
		return &field.Error{Field: "DenyHosts", Value: strconv.Quote(p.DenyHosts[0]),
			Problem: "is not in force under {Net} host, which reaches every host",
			Fix:     "list the hosts to allow with {AllowHosts} instead (network mode egress), or drop {DenyHosts}"}
	case len(p.DenyHosts) > 0 && len(p.AllowHosts) == 0 && !hostsUnknown:
		return &field.Error{Field: "DenyHosts", Value: strconv.Quote(p.DenyHosts[0]),
			Problem: "only narrows what {AllowHosts} allows, and nothing is allowed: under network mode " + p.Net + " no host is reachable anyway",
			Fix:     "add {AllowHosts} for the hosts the server may reach (* for any public host), or drop {DenyHosts}"}
	}
	return nil
}

func hostSpecError(fieldName, spec string, err error) *field.Error {
	return &field.Error{Field: fieldName, Value: strconv.Quote(spec), Problem: "is no host: " + err.Error(), Fix: HostSpecForms}
}

// ResolverAddress is a --resolver value as HOST:PORT, port 53 when none
// is given: IP, IP:PORT, [IPv6]:PORT, HOST:PORT or a bare HOST.
func ResolverAddress(s string) (string, error) {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		return netip.AddrPortFrom(a, 53).String(), nil
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		if strings.Contains(s, ":") {
			return "", fmt.Errorf("is no address: %v", err)
		}
		host, port = s, "53"
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		return "", fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return "", fmt.Errorf("%q has a zone, which a resolver cannot", host)
		}
		return net.JoinHostPort(a.String(), port), nil
	}
	if err := checkHostName(strings.TrimSuffix(strings.ToLower(host), ".")); err != nil {
		return "", err
	}
	return net.JoinHostPort(strings.TrimSuffix(strings.ToLower(host), "."), port), nil
}
