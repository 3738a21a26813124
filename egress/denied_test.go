package egress

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"testing"

	"github.com/miekg/dns"
)

// newOfflineRig serves NewOffline's resolver on loopback sockets, as the
// sandbox hands them under network none.
func newOfflineRig(t *testing.T) *rig {
	r := &rig{t: t, log: &logBuf{}, route: map[netip.AddrPort]string{}}
	r.p = NewOffline(slog.New(slog.NewTextHandler(r.log, nil)))
	t.Cleanup(func() { r.p.Close() })
	r.serve(nil)
	return r
}

// With no network, every name is NXDOMAIN at once (Go's resolver: not
// found, no retry), and the names are what Denied reports, with the flag
// that allows each; localhost still resolves.
func TestOfflineResolverDeniesAndNotesNames(t *testing.T) {
	r := newOfflineRig(t)
	_, err := r.resolver().LookupHost(context.Background(), "mcp.stripe.com")
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Fatalf("lookup: %v, want not found (NXDOMAIN)", err)
	}
	if a := r.lookup("localhost"); a.String() != "127.0.0.1" {
		t.Errorf("localhost: %s", a)
	}
	d := r.p.Denied(0)
	if len(d.Hosts) != 1 || d.Hosts[0] != (DeniedHost{Host: "mcp.stripe.com", Fix: "--allow-host mcp.stripe.com"}) || d.Others != 0 {
		t.Errorf("Denied: %+v, want mcp.stripe.com alone with its --allow-host", d)
	}
	if l := r.log.lines("name=mcp.stripe.com", `fix="--allow-host mcp.stripe.com"`); len(l) != 1 {
		t.Errorf("log lines naming the host and its fix: %q, want one", l)
	}

	// What was denied since a moment: the older name is not in it.
	mark := r.p.Denials()
	if resp := r.query("api.example.test", dns.TypeAAAA); resp.Rcode != dns.RcodeNameError {
		t.Errorf("AAAA: %s, want NXDOMAIN", dns.RcodeToString[resp.Rcode])
	}
	if d := r.p.Denied(mark); len(d.Hosts) != 1 || d.Hosts[0].Host != "api.example.test" {
		t.Errorf("Denied since the mark: %+v, want api.example.test alone", d)
	}
	if d := r.p.Denied(r.p.Denials()); len(d.Hosts) != 0 || d.Others != 0 {
		t.Errorf("Denied since now: %+v, want nothing", d)
	}
}

// A server resolving endless names grows nothing: MaxDeniedHosts are
// kept, the rest counted.
func TestOfflineResolverKeepsABoundedSet(t *testing.T) {
	r := newOfflineRig(t)
	const n = 3000
	for i := range n {
		if resp := r.query(fmt.Sprintf("h%d.example.test", i), dns.TypeA); resp.Rcode != dns.RcodeNameError {
			t.Fatalf("name %d: %s", i, dns.RcodeToString[resp.Rcode])
		}
	}
	d := r.p.Denied(0)
	if len(d.Hosts) != MaxDeniedHosts || d.Hosts[0].Host != "h0.example.test" || d.Others != n-MaxDeniedHosts {
		t.Errorf("Denied: %d hosts (first %v), %d others; want %d, h0 first, %d others", len(d.Hosts), d.Hosts[:1], d.Others, MaxDeniedHosts, n-MaxDeniedHosts)
	}
	if len(r.p.denied.last) > MaxDeniedHosts {
		t.Errorf("%d hosts remembered, past the bound %d", len(r.p.denied.last), MaxDeniedHosts)
	}
}
