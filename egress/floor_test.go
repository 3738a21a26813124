package egress

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// lastAddr is the last address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// The floor is checked by classification only: nothing here is dialled.
func TestFloorClassOfRanges(t *testing.T) {
	for _, tc := range []struct {
		prefix, want string
	}{
		{"127.0.0.0/8", "loopback"},
		{"::1/128", "loopback"},
		{"169.254.0.0/16", "link-local"},
		{"fe80::/10", "link-local"},
		{"10.0.0.0/8", "RFC 1918"},
		{"172.16.0.0/12", "RFC 1918"},
		{"192.168.0.0/16", "RFC 1918"},
		{"fc00::/7", "ULA"},
		{"0.0.0.0/8", "this network"},
		{"224.0.0.0/4", "multicast"},
		{"ff00::/8", "multicast"},
		{"100.64.0.0/10", "RFC 6598"},
		{"::/128", "unspecified"},
	} {
		p := netip.MustParsePrefix(tc.prefix)
		for _, a := range []netip.Addr{p.Addr(), lastAddr(p)} {
			if got := floorClass(a); !strings.Contains(got, tc.want) {
				t.Errorf("floorClass(%v) = %q, want it to say %q", a, got, tc.want)
			}
		}
	}
	for _, tc := range []struct{ addr, want string }{
		{"169.254.169.254", "metadata"},
		{"255.255.255.255", "broadcast"},
		{"::ffff:127.0.0.1", "loopback"},          // IPv4-mapped
		{"64:ff9b::7f00:1", "NAT64 of 127.0.0.1"}, // NAT64 of loopback
	} {
		if got := floorClass(netip.MustParseAddr(tc.addr)); !strings.Contains(got, tc.want) {
			t.Errorf("floorClass(%s) = %q, want it to say %q", tc.addr, got, tc.want)
		}
	}
	for _, ok := range []string{"192.0.2.1", "198.51.100.7", "203.0.113.255", "2001:db8::1", "64:ff9b::cb00:710a"} {
		if got := floorClass(netip.MustParseAddr(ok)); got != "" {
			t.Errorf("floorClass(%s) = %q, want none", ok, got)
		}
	}
}

func TestFloorRefuses(t *testing.T) {
	rules, err := policy.ParseHostRules([]string{"api.example.test", "127.0.0.5", "198.51.100.0/24:5432", "[::1]:8080"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := floor{
		names:     rules.NamesAddr,
		synthetic: testSynthetic,
		own: hostAddrs{list: func() ([]net.Addr, error) {
			return []net.Addr{&net.IPNet{IP: net.ParseIP("192.0.2.50"), Mask: net.CIDRMask(24, 32)}}, nil
		}},
	}
	for _, tc := range []struct{ addr, want string }{
		{"127.0.0.1", "loopback"},
		{"127.0.0.5", ""},    // named (any port: the decision is the policy's)
		{"::1", ""},          // named
		{"198.51.100.9", ""}, // in a named range
		{"192.0.2.50", "an address of this host"},
		{"192.0.2.51", ""},
		{"127.77.0.1", "loopback"},
		{"203.0.113.10", ""},
	} {
		if got := f.refuses(netip.MustParseAddr(tc.addr)); !strings.Contains(got, tc.want) || (tc.want == "") != (got == "") {
			t.Errorf("refuses(%s) = %q, want %q", tc.addr, got, tc.want)
		}
	}
	f.synthetic = netip.MustParsePrefix("198.18.0.0/15")
	if got := f.refuses(netip.MustParseAddr("198.18.0.1")); !strings.Contains(got, "synthetic range") {
		t.Errorf("an address of the synthetic range: %q", got)
	}
	f.own = hostAddrs{list: func() ([]net.Addr, error) { return nil, errors.New("no netlink") }}
	if got := f.refuses(netip.MustParseAddr("203.0.113.10")); !strings.Contains(got, "no netlink") {
		t.Errorf("when the host's addresses cannot be listed: %q, want refused", got)
	}
}
