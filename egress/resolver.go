package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// Bounds of the host-side resolution cache: entries, and the longest a
// record is trusted whatever its TTL.
const (
	maxCached   = 1024
	maxCacheTTL = 5 * time.Minute
	dnsTimeout  = 5 * time.Second
)

// resolver looks names up on the host side: with the nameservers of
// resolv.conf (the systemd-resolved stub 127.0.0.53 included) or one
// server given, asking for A and AAAA with miekg/dns, and caches answers
// for their TTL.
type resolver struct {
	fixed string // "ip:port" given, or "" for resolv.conf's
	conf  string // resolv.conf's path

	mu       sync.Mutex
	confMod  time.Time
	confSize int64
	servers  []string
	cache    map[string]resolution
}

type resolution struct {
	addrs   []netip.Addr
	expires time.Time
}

func newResolver(fixed, conf string) (*resolver, error) {
	r := &resolver{conf: conf, cache: make(map[string]resolution)}
	if fixed != "" {
		server, err := parseResolver(fixed)
		if err != nil {
			return nil, err
		}
		r.fixed = server
		return r, nil
	}
	if r.conf == "" {
		r.conf = "/etc/resolv.conf"
	}
	if _, err := r.nameservers(); err != nil {
		return nil, err
	}
	return r, nil
}

// parseResolver reads "ADDR[:PORT]" (IPv6 in brackets with a port).
func parseResolver(s string) (string, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil && ap.Port() != 0 {
		return ap.String(), nil
	}
	if a, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return netip.AddrPortFrom(a, 53).String(), nil
	}
	return "", fmt.Errorf("resolver %q is not ADDR[:PORT]: give the host-side DNS server's address, e.g. 127.0.0.53 or [2001:db8::53]:53", s)
}

// nameservers are the servers to ask, resolv.conf read again when it
// changed (NetworkManager, DHCP and VPNs rewrite it).
func (r *resolver) nameservers() ([]string, error) {
	if r.fixed != "" {
		return []string{r.fixed}, nil
	}
	st, err := os.Stat(r.conf)
	if err != nil {
		return nil, fmt.Errorf("host resolver: %v: give --resolver ADDR[:PORT]", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.servers != nil && st.ModTime().Equal(r.confMod) && st.Size() == r.confSize {
		return r.servers, nil
	}
	cc, err := dns.ClientConfigFromFile(r.conf)
	if err != nil {
		return nil, fmt.Errorf("host resolver: reading %s: %v: give --resolver ADDR[:PORT]", r.conf, err)
	}
	if len(cc.Servers) == 0 {
		return nil, fmt.Errorf("host resolver: %s names no nameserver: give --resolver ADDR[:PORT]", r.conf)
	}
	servers := make([]string, 0, len(cc.Servers))
	for _, s := range cc.Servers {
		servers = append(servers, net.JoinHostPort(s, cc.Port))
	}
	r.servers, r.confMod, r.confSize = servers, st.ModTime(), st.Size()
	return servers, nil
}

// errNoName is a name the host's resolver says does not exist.
var errNoName = errors.New("no such name (NXDOMAIN)")

// lookup returns name's IPv4 then IPv6 addresses, from the cache while
// their TTL lasts.
func (r *resolver) lookup(ctx context.Context, name string) ([]netip.Addr, error) {
	now := time.Now()
	r.mu.Lock()
	if c, ok := r.cache[name]; ok && now.Before(c.expires) {
		r.mu.Unlock()
		return c.addrs, nil
	}
	r.mu.Unlock()

	servers, err := r.nameservers()
	if err != nil {
		return nil, err
	}
	type answer struct {
		addrs []netip.Addr
		ttl   uint32
		err   error
	}
	var v4, v6 answer
	var wg sync.WaitGroup
	for _, q := range []struct {
		t   uint16
		ans *answer
	}{{dns.TypeA, &v4}, {dns.TypeAAAA, &v6}} {
		wg.Go(func() { q.ans.addrs, q.ans.ttl, q.ans.err = ask(ctx, servers, name, q.t) })
	}
	wg.Wait()
	addrs := append(v4.addrs, v6.addrs...)
	if len(addrs) == 0 {
		switch {
		case v4.err != nil:
			return nil, v4.err
		case v6.err != nil:
			return nil, v6.err
		}
		return nil, errors.New("no A or AAAA record")
	}
	ttl := v4.ttl
	if len(v4.addrs) == 0 || len(v6.addrs) > 0 && v6.ttl < ttl {
		ttl = v6.ttl
	}
	if ttl > 0 {
		r.remember(name, resolution{addrs, now.Add(min(time.Duration(ttl)*time.Second, maxCacheTTL))}, now)
	}
	return addrs, nil
}

// remember caches a resolution, making room by dropping expired entries,
// then any one.
func (r *resolver) remember(name string, res resolution, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.cache) >= maxCached {
		for k, c := range r.cache {
			if !now.Before(c.expires) {
				delete(r.cache, k)
			}
		}
	}
	for k := range r.cache {
		if len(r.cache) < maxCached {
			break
		}
		delete(r.cache, k)
	}
	r.cache[name] = res
}

// ask asks each server in turn for name's records of type t until one
// answers; ttl is the least of the records used.
func ask(ctx context.Context, servers []string, name string, t uint16) (addrs []netip.Addr, ttl uint32, err error) {
	q := new(dns.Msg)
	q.SetQuestion(dns.Fqdn(name), t)
	q.RecursionDesired = true
	q.SetEdns0(1232, false)
	for _, server := range servers {
		var resp *dns.Msg
		resp, err = exchange(ctx, q, server)
		if err != nil {
			continue
		}
		switch resp.Rcode {
		case dns.RcodeSuccess:
			addrs, ttl = addressesOf(resp, name, t)
			return addrs, ttl, nil
		case dns.RcodeNameError:
			return nil, 0, errNoName
		}
		err = fmt.Errorf("%s answered %s", server, dns.RcodeToString[resp.Rcode])
		if ctx.Err() != nil {
			break
		}
	}
	return nil, 0, err
}

// exchange asks over UDP, again over TCP when the answer was truncated.
func exchange(ctx context.Context, q *dns.Msg, server string) (*dns.Msg, error) {
	c := dns.Client{Net: "udp", Timeout: dnsTimeout}
	resp, _, err := c.ExchangeContext(ctx, q, server)
	if err == nil && resp.Truncated {
		c.Net = "tcp"
		resp, _, err = c.ExchangeContext(ctx, q, server)
	}
	if err != nil {
		return nil, fmt.Errorf("asking %s: %w", server, err)
	}
	return resp, nil
}

// addressesOf are the records of type t that answer name, through its
// CNAME chain.
func addressesOf(resp *dns.Msg, name string, t uint16) ([]netip.Addr, uint32) {
	chain := map[string]bool{strings.ToLower(dns.Fqdn(name)): true}
	for range 8 { // CNAMEs may come in any order; a chain is short
		grew := false
		for _, rr := range resp.Answer {
			if c, ok := rr.(*dns.CNAME); ok && chain[strings.ToLower(c.Hdr.Name)] && !chain[strings.ToLower(c.Target)] {
				chain[strings.ToLower(c.Target)] = true
				grew = true
			}
		}
		if !grew {
			break
		}
	}
	var addrs []netip.Addr
	var ttl uint32
	for _, rr := range resp.Answer {
		h := rr.Header()
		if h.Rrtype != t || !chain[strings.ToLower(h.Name)] {
			continue
		}
		var ip net.IP
		switch rr := rr.(type) {
		case *dns.A:
			ip = rr.A
		case *dns.AAAA:
			ip = rr.AAAA
		}
		a, ok := netip.AddrFromSlice(ip)
		if !ok {
			continue
		}
		if len(addrs) == 0 || h.Ttl < ttl {
			ttl = h.Ttl
		}
		addrs = append(addrs, a.Unmap())
	}
	return addrs, ttl
}
