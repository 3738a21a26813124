package egress

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"
)

// floorRange is a range the dialer never connects to unless the policy
// names the address itself.
type floorRange struct {
	prefix netip.Prefix
	what   string
}

var floorRanges = []floorRange{
	{netip.MustParsePrefix("0.0.0.0/8"), "\"this network\" (0.0.0.0/8)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local (169.254.0.0/16, where cloud metadata services answer)"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private (RFC 1918)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private (RFC 1918)"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private (RFC 1918)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space (RFC 6598: carrier-grade NAT, VPN overlays)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved (240.0.0.0/4)"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
	{netip.MustParsePrefix("fc00::/7"), "unique local (ULA, fc00::/7)"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

// nat64 is the well-known NAT64 prefix: its addresses reach the IPv4
// address in their last 32 bits, which the floor checks instead.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// floorClass names the fixed range of the SSRF floor that a lies in, or is
// "" when a lies in none.
func floorClass(a netip.Addr) string {
	a = a.Unmap()
	for _, r := range floorRanges {
		if r.prefix.Contains(a) {
			return r.what
		}
	}
	if nat64.Contains(a) {
		b := a.As16()
		v4 := netip.AddrFrom4([4]byte(b[12:]))
		if why := floorClass(v4); why != "" {
			return fmt.Sprintf("NAT64 of %s, %s", v4, why)
		}
	}
	return ""
}

// floor is the SSRF floor of one Proxy: the fixed ranges, the synthetic
// range and the host's own addresses, lifted for what the policy names.
type floor struct {
	names     func(netip.Addr) bool // the policy names the address itself
	synthetic netip.Prefix
	own       hostAddrs
}

// refuses says why the dialer must not connect to a, or "" when it may.
func (f *floor) refuses(a netip.Addr) string {
	a = a.Unmap()
	if f.names(a) {
		return ""
	}
	if why := floorClass(a); why != "" {
		return why
	}
	if f.synthetic.Contains(a) {
		return "in the DNS stub's synthetic range " + f.synthetic.String()
	}
	own, err := f.own.contains(a)
	if err != nil {
		return "not checked against this host's addresses: " + err.Error()
	}
	if own {
		return "an address of this host"
	}
	return ""
}

// hostAddrs are the addresses of the supervisor's network namespace, listed
// again when the last list is older than hostAddrsAge (addresses change
// with DHCP, VPNs, containers starting).
type hostAddrs struct {
	list func() ([]net.Addr, error) // net.InterfaceAddrs; tests give their own

	mu    sync.Mutex
	at    time.Time
	addrs map[netip.Addr]bool
}

const hostAddrsAge = 2 * time.Second

func (h *hostAddrs) contains(a netip.Addr) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.addrs == nil || time.Since(h.at) > hostAddrsAge {
		list := h.list
		if list == nil {
			list = net.InterfaceAddrs
		}
		got, err := list()
		if err != nil {
			return false, err
		}
		h.addrs = make(map[netip.Addr]bool, len(got))
		for _, g := range got {
			var ip net.IP
			switch g := g.(type) {
			case *net.IPNet:
				ip = g.IP
			case *net.IPAddr:
				ip = g.IP
			}
			if x, ok := netip.AddrFromSlice(ip); ok {
				h.addrs[x.Unmap()] = true
			}
		}
		h.at = time.Now()
	}
	return h.addrs[a], nil
}
