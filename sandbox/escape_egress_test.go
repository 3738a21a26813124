package sandbox

import (
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// The escape table again under egress capture (NetEgress): the server has a
// network namespace of its own with inet sockets, TCP to the captured range
// lands on the test's listeners, and everything else is refused. Every row
// stays blocked but the ones escapeEgressRows opens by design, and the
// network rows must fail the way egress says they do.

// escapeEgressCapture is what the proxy would capture: its synthetic range
// on the default ports.
var escapeEgressCapture = CaptureSpec{
	Ports: []uint16{443, 80},
	Local: []netip.Prefix{netip.MustParsePrefix("198.18.0.0/15")},
}

// escapeOtherHosts are destinations nothing captures; documentation
// ranges only, on the captured ports, so that only the route refuses them.
var escapeOtherHosts = []string{"203.0.113.9:443", "198.51.100.9:80", "[2001:db8::9]:443"}

// escapeEgressRow is what a row must show under egress where that differs
// from "blocked", or says more.
type escapeEgressRow struct {
	open  string // why egress opens the row by design; "" = it stays blocked
	check func(t *testing.T, e *escapeEgress, r escapeResult)
}

var escapeEgressRows = map[string]escapeEgressRow{
	"socket_inet": {open: "inet sockets are what egress is for; where they lead is net_host_loopback_tcp's",
		check: func(t *testing.T, _ *escapeEgress, r escapeResult) {
			if r.Blocked {
				t.Errorf("inet sockets refused under egress, so no server could reach an allowed host: %s", r.Detail)
			}
		}},
	"socketpair_other_families": {open: "inet is allowed, so socketpair(AF_INET) reaches the kernel, which refuses it (EOPNOTSUPP)",
		check: func(t *testing.T, _ *escapeEgress, r escapeResult) {
			for _, note := range strings.Split(r.Detail, "; ") {
				if strings.HasPrefix(note, "ESCAPED: ") && !strings.Contains(note, "AF_INET, SOCK_STREAM) reached the kernel: ENOTSUP") {
					t.Errorf("more than socketpair(AF_INET) got through: %s", note)
				}
			}
		}},
	// The host's loopback is not there to reach: 127.0.0.1 and ::1 are the
	// server's own, where nothing listens on the host listener's port.
	// The host's own addresses and other hosts are not captured: the
	// prohibit route refuses them at connect.
	"net_host_loopback_tcp": {check: func(t *testing.T, e *escapeEgress, r escapeResult) {
		_, port, _ := net.SplitHostPort(e.c.tcp.Addr().String())
		for _, host := range []string{"127.0.0.1", "::1", "0.0.0.0"} {
			escapeDialFailed(t, r, net.JoinHostPort(host, port), "connection refused")
		}
		for _, addr := range e.c.args["other_tcp"].([]string) {
			escapeDialFailed(t, r, addr, "permission denied")
		}
		for _, l := range e.own {
			escapeNoConnection(t, "own address "+l.Addr().String(), l)
		}
	}},
	// Abstract unix sockets belong to a network namespace: the host's are
	// not in the server's.
	"net_host_abstract_unix": {check: func(t *testing.T, e *escapeEgress, r escapeResult) {
		escapeDialFailed(t, r, "@"+e.c.args["abstract_socket"].(string), "connection refused")
	}},
}

// escapeDialFailed: the probe's dial of addr failed with the system error
// want (tryDial's note holds net's error text).
func escapeDialFailed(t *testing.T, r escapeResult, addr, want string) {
	t.Helper()
	if !strings.Contains(r.Detail, " "+addr+": connect: "+want) {
		t.Errorf("dialling %s did not fail with %q: %s", addr, want, r.Detail)
	}
}

// escapeEgress is the egress side of one run: listeners on the host's own
// addresses, and the captured listeners, served by accepting and closing.
type escapeEgress struct {
	c      *escapeCanaries
	own    []net.Listener
	served []Listeners
}

func (e *escapeEgress) serve(l Listeners) error {
	e.served = append(e.served, l)
	drop := func(ln net.Listener) {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}
	for _, t := range append([]net.Listener{l.DNSTCP}, l.TCP...) {
		go drop(t)
	}
	go func() {
		buf := make([]byte, 512)
		for {
			if _, _, err := l.DNS.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	return nil
}

// escapeOwnAddrs are the host's own addresses a test may dial: those in
// the documentation ranges (test networks use them), never others.
func escapeOwnAddrs(t *testing.T) []netip.Addr {
	addrs, err := net.InterfaceAddrs()
	escapeMust(t, err)
	var own []netip.Addr
	for _, a := range addrs {
		p, err := netip.ParsePrefix(a.String())
		if err != nil {
			continue
		}
		for _, doc := range []string{"192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32"} {
			if netip.MustParsePrefix(doc).Contains(p.Addr()) {
				own = append(own, p.Addr())
			}
		}
	}
	return own
}

// escapeEgressTable runs the escape table with egress capture.
func escapeEgressTable(t *testing.T, hostile string) {
	c := newGrantedEscapeCanaries(t, hostile)
	e := &escapeEgress{c: c}
	t.Cleanup(func() {
		for _, l := range e.served {
			l.close()
		}
	})
	other := slices.Clone(escapeOtherHosts)
	for _, a := range escapeOwnAddrs(t) {
		l, err := net.Listen("tcp", net.JoinHostPort(a.String(), "0"))
		escapeMust(t, err)
		t.Cleanup(func() { l.Close() })
		e.own = append(e.own, l)
		other = append(other, l.Addr().String())
	}
	if len(e.own) == 0 {
		t.Log("the host has no address in a documentation range: its own addresses are not dialled (no other may be)")
	}
	c.args["other_tcp"] = other

	spec := escapeSpec(hostile, []string{c.roDir, c.setIDDir}, []string{c.rwDir})
	spec.Net, spec.Capture, spec.Egress = NetEgress, escapeEgressCapture, e.serve
	report := escapeRun(t, spec, c.args)
	if len(e.served) != 1 {
		t.Errorf("Egress was called %d times for one start", len(e.served))
	}
	for _, row := range escapeChecks {
		t.Run(row.class, func(t *testing.T) {
			r, ok := report[row.class]
			if !ok {
				t.Fatalf("the hostile server did not report %s", row.class)
			}
			want := escapeEgressRows[row.class]
			switch {
			case want.open != "":
				t.Logf("open under egress (%s): %s", want.open, r.Detail)
			case !r.Blocked:
				t.Errorf("NOT BLOCKED: %s", r.Detail)
			default:
				t.Logf("blocked: %s", r.Detail)
			}
			if want.check != nil {
				want.check(t, e, r)
			}
			if row.host != nil && want.open == "" {
				row.host(c, t)
			}
		})
	}
}
