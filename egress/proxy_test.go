package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/miekg/dns"
)

// countingConn counts what an upstream server reads and writes.
type countingConn struct {
	net.Conn
	read, written *atomic.Int64
}

func (c countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.read.Add(int64(n))
	return n, err
}

func (c countingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.written.Add(int64(n))
	return n, err
}

type countingListener struct {
	net.Listener
	read, written atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, &l.read, &l.written}, nil
}

func TestAllowedNameCarriesHTTPEndToEnd(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	up := &countingListener{Listener: raw}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s from %s", r.URL.Path, r.Host)
	})}
	go srv.Serve(up)
	t.Cleanup(func() { srv.Close() })
	port := raw.Addr().(*net.TCPAddr).Port

	r := newRig(t, rigOptions{
		allow:  []string{fmt.Sprintf("api.example.test:%d", port), fmt.Sprintf("127.0.0.1:%d", port)},
		listen: []string{synth(1).String()},
		ttl:    60,
	})
	r.dns.set("api.example.test", "127.0.0.1")

	ports, local := r.p.Capture()
	if !slices.Equal(ports, []uint16{uint16(port)}) || !slices.Equal(local, []netip.Prefix{testSynthetic}) {
		t.Fatalf("Capture() = %v, %v: want the policy's port and the synthetic range alone (127.0.0.1 named lifts the floor; inside, loopback is the server's own)", ports, local)
	}

	// Go net/http with no proxy setting: it resolves through the stub and
	// dials the synthetic address.
	tr := &http.Transport{DialContext: (&net.Dialer{Resolver: r.resolver()}).DialContext}
	client := &http.Client{Transport: tr}
	resp, err := client.Get(fmt.Sprintf("http://api.example.test:%d/hi", port))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("hello /hi from api.example.test:%d", port); string(body) != want {
		t.Fatalf("body %q, want %q", body, want)
	}
	tr.CloseIdleConnections()

	c := r.ev.next(t)
	if !c.Allowed || c.Name != "api.example.test" || c.Port != uint16(port) || c.Dest != synth(1) || c.Addr != netip.MustParseAddr("127.0.0.1") || c.Err != nil {
		t.Fatalf("OnClose got %+v: want allowed api.example.test:%d, dest %v, dialled 127.0.0.1, no error", c, port, synth(1))
	}
	if c.BytesUp != up.read.Load() || c.BytesDown != up.written.Load() || c.BytesUp == 0 || c.BytesDown == 0 {
		t.Fatalf("counted %d up, %d down; the server read %d and wrote %d", c.BytesUp, c.BytesDown, up.read.Load(), up.written.Load())
	}
	if c.Duration <= 0 {
		t.Fatalf("duration %v", c.Duration)
	}
	o, ok := r.ev.openedByID(c.ID)
	if !ok || !o.Allowed || o.BytesUp != 0 || o.Addr != c.Addr {
		t.Fatalf("OnOpen got %+v (seen %v): want the same connection before any byte", o, ok)
	}
	if l := r.log.lines("egress: connection", "host=api.example.test", "addr=127.0.0.1", "allowed=true", fmt.Sprintf("up=%d down=%d", c.BytesUp, c.BytesDown)); len(l) != 1 {
		t.Fatalf("want one log line of the connection with its bytes; log:\n%s", r.log.b.String())
	}
}

func TestDeniedNameIsNXDOMAINAndLoggedOnce(t *testing.T) {
	r := newRig(t, rigOptions{
		allow: []string{"api.example.test"},
		deny:  []string{"bad.example.test"},
	})
	r.dns.set("evil.example.test", "192.0.2.66")
	for _, name := range []string{"evil.example.test", "evil.example.test", "bad.example.test"} {
		if resp := r.query(name, dns.TypeA); resp.Rcode != dns.RcodeNameError || len(resp.Answer) != 0 {
			t.Fatalf("stub's answer for %s: %v: want NXDOMAIN", name, resp)
		}
	}
	_, err := r.resolver().LookupHost(context.Background(), "evil.example.test")
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Fatalf("a Go client's lookup: %v: want not found", err)
	}
	if l := r.log.lines("name denied", "name=evil.example.test", `fix="--allow-host evil.example.test"`); len(l) != 1 {
		t.Fatalf("want one line naming the fix for evil.example.test, asked 4 times; log:\n%s", r.log.b.String())
	}
	if l := r.log.lines("name denied", "name=bad.example.test"); len(l) != 1 {
		t.Fatalf("want one line for the denied name; log:\n%s", r.log.b.String())
	}
	if n := r.dns.queries("evil.example.test"); n != 0 {
		t.Fatalf("the host's resolver was asked %d times for a denied name", n)
	}
}

func TestOtherPortOfAllowedNameIsRefused(t *testing.T) {
	u := startUpstream(t, echo)
	other := startUpstream(t, echo) // only its port: another name is allowed there
	r := newRig(t, rigOptions{
		allow:  []string{u.at("api.example.test"), u.at("127.0.0.1"), other.at("web.example.test")},
		listen: []string{synth(1).String()},
	})
	r.dns.set("api.example.test", "127.0.0.1")
	if a := r.lookup("api.example.test"); a != synth(1) {
		t.Fatalf("api.example.test got %v, want %v", a, synth(1))
	}
	dialRefused(t, netip.AddrPortFrom(synth(1), other.port).String())
	ev := r.ev.next(t)
	want := fmt.Sprintf("--allow-host api.example.test:%d", other.port)
	if ev.Allowed || ev.Name != "api.example.test" || ev.Port != other.port || ev.Fix != want || !strings.Contains(ev.Reason, "not allowed") {
		t.Fatalf("OnClose got %+v: want denied with fix %q", ev, want)
	}
	if d := r.dials(); len(d) != 0 {
		t.Fatalf("the proxy dialled %v for a denied port", d)
	}
	if l := r.log.lines("connection denied", "host=api.example.test", `fix="`+want+`"`); len(l) != 1 {
		t.Fatalf("want one denial line with the fix; log:\n%s", r.log.b.String())
	}
}

func TestIPLiteral(t *testing.T) {
	u := startUpstream(t, echo)
	r := newRig(t, rigOptions{
		allow:  []string{u.at("127.0.0.3")},
		listen: []string{"127.0.0.2", "127.0.0.3"},
	})
	// The proxy's own listener holds 127.0.0.3 here; in production the dial
	// is made in the host's namespace, where the server's are not.
	r.routeTo(u.at("127.0.0.3"), u.at("127.0.0.1"))

	t.Run("named by the policy: dialled directly", func(t *testing.T) {
		echoOnce(t, u.at("127.0.0.3"), "literal")
		ev := r.ev.next(t)
		if !ev.Allowed || ev.Name != "" || ev.Addr != netip.MustParseAddr("127.0.0.3") || ev.BytesUp != 7 || ev.BytesDown != 7 {
			t.Fatalf("OnClose got %+v", ev)
		}
	})
	t.Run("not named: refused", func(t *testing.T) {
		dialRefused(t, u.at("127.0.0.2"))
		ev := r.ev.next(t)
		want := fmt.Sprintf("--allow-host 127.0.0.2:%d", u.port)
		if ev.Allowed || ev.Dest != netip.MustParseAddr("127.0.0.2") || ev.Fix != want {
			t.Fatalf("OnClose got %+v: want refused with fix %q", ev, want)
		}
		if d := r.dials(); len(d) != 1 {
			t.Fatalf("dials %v: want only the allowed one's", d)
		}
	})
}

func TestFloorRefusesLoopbackResolution(t *testing.T) {
	u := startUpstream(t, echo)
	r := newRig(t, rigOptions{
		allow:  []string{u.at("api.example.test"), u.at("mixed.example.test")},
		listen: []string{synth(1).String(), synth(2).String()},
		ttl:    60,
	})
	r.dns.set("api.example.test", "127.0.0.1", "::1")
	r.dns.set("mixed.example.test", "127.0.0.1", "203.0.113.10")
	r.routeTo(u.at("203.0.113.10"), u.at("127.0.0.1"))

	r.lookup("api.example.test")
	dialRefused(t, netip.AddrPortFrom(synth(1), u.port).String())
	ev := r.ev.next(t)
	if ev.Allowed || ev.Addr != netip.MustParseAddr("127.0.0.1") || !strings.Contains(ev.Reason, "127.0.0.1 (loopback), ::1 (loopback)") ||
		ev.Fix != fmt.Sprintf("--allow-host 127.0.0.1:%d", u.port) {
		t.Fatalf("OnClose got %+v: want refused by the floor, naming both addresses", ev)
	}
	if d := r.dials(); len(d) != 0 {
		t.Fatalf("the proxy dialled %v", d)
	}

	// Of a loopback and a public-looking address, only the latter is dialled.
	r.lookup("mixed.example.test")
	echoOnce(t, netip.AddrPortFrom(synth(2), u.port).String(), "ok")
	if ev := r.ev.next(t); !ev.Allowed || ev.Addr != netip.MustParseAddr("203.0.113.10") {
		t.Fatalf("OnClose got %+v: want dialled 203.0.113.10", ev)
	}
	if d := r.dials(); !slices.Equal(d, []netip.AddrPort{netip.MustParseAddrPort(u.at("203.0.113.10"))}) {
		t.Fatalf("dials %v: want only 203.0.113.10", d)
	}
}

func TestRebindingToLoopbackIsRefused(t *testing.T) {
	u := startUpstream(t, echo)
	t.Run("public first, loopback second", func(t *testing.T) {
		r := newRig(t, rigOptions{allow: []string{u.at("api.example.test")}, listen: []string{synth(1).String()}, ttl: 0})
		r.dns.setSeq("api.example.test", func(n int) []string {
			if n == 1 {
				return []string{"203.0.113.10"}
			}
			return []string{"127.0.0.1"}
		})
		r.routeTo(u.at("203.0.113.10"), u.at("127.0.0.1"))
		r.lookup("api.example.test")

		echoOnce(t, netip.AddrPortFrom(synth(1), u.port).String(), "first")
		if ev := r.ev.next(t); !ev.Allowed || ev.Addr != netip.MustParseAddr("203.0.113.10") {
			t.Fatalf("first: %+v", ev)
		}
		dialRefused(t, netip.AddrPortFrom(synth(1), u.port).String())
		if ev := r.ev.next(t); ev.Allowed || !strings.Contains(ev.Reason, "127.0.0.1 (loopback)") {
			t.Fatalf("second: %+v: want refused by the floor", ev)
		}
		if n := r.dns.queries("api.example.test"); n != 2 {
			t.Fatalf("the host's resolver was asked %d times, want 2 (TTL 0)", n)
		}
		if d := r.dials(); !slices.Equal(d, []netip.AddrPort{netip.MustParseAddrPort(u.at("203.0.113.10"))}) {
			t.Fatalf("dials %v: want 203.0.113.10 only", d)
		}
	})
	t.Run("loopback first stays refused while its TTL lasts", func(t *testing.T) {
		r := newRig(t, rigOptions{allow: []string{u.at("api.example.test")}, listen: []string{synth(1).String()}, ttl: 60})
		r.dns.setSeq("api.example.test", func(n int) []string {
			if n == 1 {
				return []string{"127.0.0.1"}
			}
			return []string{"203.0.113.10"}
		})
		r.routeTo(u.at("203.0.113.10"), u.at("127.0.0.1"))
		r.lookup("api.example.test")
		for range 2 {
			dialRefused(t, netip.AddrPortFrom(synth(1), u.port).String())
			if ev := r.ev.next(t); ev.Allowed {
				t.Fatalf("allowed %+v", ev)
			}
		}
		if n := r.dns.queries("api.example.test"); n != 1 {
			t.Fatalf("asked %d times: want the refused answer kept for its TTL", n)
		}
		if d := r.dials(); len(d) != 0 {
			t.Fatalf("dials %v", d)
		}
	})
}

func TestNamesKeepTheirAddressesAcrossRestarts(t *testing.T) {
	u := startUpstream(t, echo)
	r := newRig(t, rigOptions{
		allow:  []string{u.at("*.example.test"), u.at("127.0.0.1")},
		listen: []string{synth(1).String(), synth(2).String()},
		ttl:    60,
	})
	r.dns.set("api.example.test", "127.0.0.1")
	r.dns.set("web.example.test", "127.0.0.1")
	api, web := r.lookup("api.example.test"), r.lookup("web.example.test")
	if api != synth(1) || web != synth(2) {
		t.Fatalf("api %v, web %v: want %v and %v", api, web, synth(1), synth(2))
	}
	if again := r.lookup("api.example.test"); again != api {
		t.Fatalf("api.example.test asked again got %v, had %v", again, api)
	}

	r.stop()
	r.serve([]string{synth(1).String(), synth(2).String()}) // the server restarted
	if w, a := r.lookup("web.example.test"), r.lookup("api.example.test"); w != web || a != api {
		t.Fatalf("after the restart web %v, api %v: want %v, %v", w, a, web, api)
	}
	echoOnce(t, netip.AddrPortFrom(web, u.port).String(), "again")
	if ev := r.ev.next(t); !ev.Allowed || ev.Name != "web.example.test" {
		t.Fatalf("OnClose %+v: want web.example.test", ev)
	}
}

func TestStubTableIsBounded(t *testing.T) {
	r := newRig(t, rigOptions{allow: []string{"*.example.test"}})
	co, err := dns.Dial("udp", r.stub)
	if err != nil {
		t.Fatal(err)
	}
	defer co.Close()
	ask := func(name string) *dns.Msg {
		m := new(dns.Msg)
		m.SetQuestion(name, dns.TypeA)
		if err := co.WriteMsg(m); err != nil {
			t.Fatal(err)
		}
		resp, err := co.ReadMsg()
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	seen := map[netip.Addr]bool{}
	for i := range maxNames {
		resp := ask(fmt.Sprintf("n%d.example.test.", i))
		if resp.Rcode != dns.RcodeSuccess || len(resp.Answer) != 1 {
			t.Fatalf("name %d: %v", i, resp)
		}
		a, _ := netip.AddrFromSlice(resp.Answer[0].(*dns.A).A)
		if seen[a] || !testSynthetic.Contains(a.Unmap()) {
			t.Fatalf("name %d got %v: reused or outside the range", i, a)
		}
		seen[a] = true
	}
	for range 3 {
		if resp := ask("one-too-many.example.test."); resp.Rcode != dns.RcodeServerFailure {
			t.Fatalf("past the bound: %v, want SERVFAIL", resp)
		}
	}
	if resp := ask("n7.example.test."); resp.Rcode != dns.RcodeSuccess {
		t.Fatalf("a name given before the table filled: %v", resp)
	}
	if l := r.log.lines("table is full"); len(l) != 1 {
		t.Fatalf("want one line about the full table; log:\n%s", strings.Join(l, "\n"))
	}
}

func TestMaxConnsBoundsOpenConnections(t *testing.T) {
	u := startUpstream(t, echo)
	r := newRig(t, rigOptions{
		allow:    []string{u.at("api.example.test"), u.at("127.0.0.1")},
		listen:   []string{synth(1).String()},
		maxConns: 2,
		ttl:      60,
	})
	r.dns.set("api.example.test", "127.0.0.1")
	to := netip.AddrPortFrom(r.lookup("api.example.test"), u.port).String()
	var open []net.Conn
	for i := range 2 {
		c, err := net.Dial("tcp", to)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		roundTrip(t, c, fmt.Sprint("conn", i))
		open = append(open, c)
	}
	dialRefused(t, to)
	if ev := r.ev.next(t); ev.Allowed || !strings.Contains(ev.Reason, "2 connections are open already") {
		t.Fatalf("OnClose %+v: want refused past MaxConns", ev)
	}
	open[0].Close()
	if ev := r.ev.next(t); !ev.Allowed {
		t.Fatalf("OnClose %+v: want the first connection's end", ev)
	}
	c, err := net.Dial("tcp", to)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	roundTrip(t, c, "room again")
}

func TestHalfClosePassesThrough(t *testing.T) {
	// The server reads to the end of the request, then answers.
	u := startUpstream(t, func(c net.Conn) {
		n, _ := io.Copy(io.Discard, c)
		fmt.Fprintf(c, "read %d bytes", n)
	})
	r := newRig(t, rigOptions{
		allow:  []string{u.at("api.example.test"), u.at("127.0.0.1")},
		listen: []string{synth(1).String()},
	})
	r.dns.set("api.example.test", "127.0.0.1")
	c, err := net.Dial("tcp", netip.AddrPortFrom(r.lookup("api.example.test"), u.port).String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, strings.Repeat("x", 100000)); err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "read 100000 bytes" {
		t.Fatalf("after CloseWrite read %q, %v", got, err)
	}
	if ev := r.ev.next(t); ev.BytesUp != 100000 || ev.BytesDown != int64(len(got)) || ev.Err != nil {
		t.Fatalf("OnClose %+v", ev)
	}
}

func TestStopEndsOpenConnections(t *testing.T) {
	u := startUpstream(t, echo)
	r := newRig(t, rigOptions{
		allow:  []string{u.at("api.example.test"), u.at("127.0.0.1")},
		listen: []string{synth(1).String()},
	})
	r.dns.set("api.example.test", "127.0.0.1")
	c, err := net.Dial("tcp", netip.AddrPortFrom(r.lookup("api.example.test"), u.port).String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	roundTrip(t, c, "open")
	r.stop()
	select {
	case ev := <-r.ev.closed:
		if ev.BytesUp != 4 {
			t.Fatalf("OnClose %+v", ev)
		}
	default:
		t.Fatal("stop returned before the connection's OnClose")
	}
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("the connection is still open after stop")
	}
	if _, err := net.Dial("tcp", netip.AddrPortFrom(synth(1), u.port).String()); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial after stop: %v, want refused", err)
	}
}

func TestRepeatedDenialsAreCountedNotEachLogged(t *testing.T) {
	u := startUpstream(t, echo) // for its port
	r := newRig(t, rigOptions{allow: []string{u.at("api.example.test")}, listen: []string{"127.0.0.2"}})
	for range 100 {
		dialRefused(t, u.at("127.0.0.2"))
		if ev := r.ev.next(t); ev.Allowed {
			t.Fatalf("allowed %+v", ev)
		}
	}
	lines := r.log.lines("connection denied", "host=127.0.0.2")
	if len(lines) != 3 || !strings.Contains(lines[1], "repeated=10") || !strings.Contains(lines[2], "repeated=100") {
		t.Fatalf("100 denials logged as:\n%s\nwant 3 lines: the first, the 10th, the 100th", strings.Join(lines, "\n"))
	}
}

func TestDialFallsBackToTheNextAddress(t *testing.T) {
	u := startUpstream(t, echo)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed.Close() // nothing listens there now: connecting is refused
	r := newRig(t, rigOptions{allow: []string{u.at("api.example.test")}, listen: []string{synth(1).String()}})
	r.dns.set("api.example.test", "203.0.113.11", "203.0.113.10")
	r.routeTo(u.at("203.0.113.11"), closed.Addr().String())
	r.routeTo(u.at("203.0.113.10"), u.at("127.0.0.1"))
	c, err := net.Dial("tcp", netip.AddrPortFrom(r.lookup("api.example.test"), u.port).String())
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, c, "second address")
	c.Close()
	if ev := r.ev.next(t); !ev.Allowed || ev.Addr != netip.MustParseAddr("203.0.113.10") || ev.Err != nil {
		t.Fatalf("OnClose %+v: want carried through 203.0.113.10", ev)
	}
	want := []netip.AddrPort{netip.MustParseAddrPort(u.at("203.0.113.11")), netip.MustParseAddrPort(u.at("203.0.113.10"))}
	if d := r.dials(); !slices.Equal(d, want) {
		t.Fatalf("dials %v, want %v", d, want)
	}
}

func TestUnreachableUpstreamIsReset(t *testing.T) {
	u := startUpstream(t, echo) // for its port
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	r := newRig(t, rigOptions{allow: []string{u.at("api.example.test")}, listen: []string{synth(1).String()}})
	r.dns.set("api.example.test", "203.0.113.12")
	r.routeTo(u.at("203.0.113.12"), closed.Addr().String())
	dialRefused(t, netip.AddrPortFrom(r.lookup("api.example.test"), u.port).String())
	if ev := r.ev.next(t); !ev.Allowed || !errors.Is(ev.Err, syscall.ECONNREFUSED) || ev.BytesUp != 0 {
		t.Fatalf("OnClose %+v: want allowed, failed with the upstream's refusal", ev)
	}
	if l := r.log.lines("egress: connection", "allowed=true", "connection refused"); len(l) != 1 {
		t.Fatalf("want the failure logged; log:\n%s", r.log.b.String())
	}
}
