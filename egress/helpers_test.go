package egress

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/miekg/dns"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Tests run on loopback only. The synthetic range is 127.77.0.0/16, so a
// listener bound to 127.77.0.N:PORT receives what a client dials to the
// stub's answer, with LocalAddr() telling it, as the netns's local routes do
// in production. Upstream servers listen on 127.0.0.1; the host-side
// resolver is a DNS server of the test's own.
var testSynthetic = netip.MustParsePrefix("127.77.0.0/16")

// synth is the n-th synthetic address the stub gives (from 1).
func synth(n int) netip.Addr {
	a := testSynthetic.Addr()
	for range n {
		a = a.Next()
	}
	return a
}

// hostDNS is the test's own host-side DNS server: answers[name] gives the
// addresses for the n-th A/AAAA query of that name (n from 1).
type hostDNS struct {
	addr string
	ttl  uint32

	mu      sync.Mutex
	answers map[string]func(n int) []netip.Addr
	asked   map[string]int // A queries per name
}

func startHostDNS(t testing.TB, ttl uint32) *hostDNS {
	t.Helper()
	h := &hostDNS{ttl: ttl, answers: map[string]func(int) []netip.Addr{}, asked: map[string]int{}}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.addr = pc.LocalAddr().String()
	started := make(chan struct{})
	srv := &dns.Server{PacketConn: pc, Handler: h, NotifyStartedFunc: func() { close(started) }}
	go srv.ActivateAndServe()
	<-started
	t.Cleanup(func() { srv.Shutdown() })
	return h
}

// set makes name answer addrs, whatever the query's number.
func (h *hostDNS) set(name string, addrs ...string) {
	h.setSeq(name, func(int) []string { return addrs })
}

func (h *hostDNS) setSeq(name string, fn func(n int) []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.answers[name+"."] = func(n int) []netip.Addr {
		var out []netip.Addr
		for _, s := range fn(n) {
			out = append(out, netip.MustParseAddr(s))
		}
		return out
	}
}

func (h *hostDNS) queries(name string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.asked[name+"."]
}

func (h *hostDNS) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	q := req.Question[0]
	h.mu.Lock()
	fn, ok := h.answers[q.Name]
	if q.Qtype == dns.TypeA {
		h.asked[q.Name]++
	}
	n := h.asked[q.Name]
	if q.Qtype == dns.TypeAAAA {
		n = max(n, 1)
	}
	h.mu.Unlock()
	if !ok {
		m.SetRcode(req, dns.RcodeNameError)
		w.WriteMsg(m)
		return
	}
	hdr := dns.RR_Header{Name: q.Name, Rrtype: q.Qtype, Class: dns.ClassINET, Ttl: h.ttl}
	for _, a := range fn(n) {
		switch {
		case q.Qtype == dns.TypeA && a.Is4():
			m.Answer = append(m.Answer, &dns.A{Hdr: hdr, A: a.AsSlice()})
		case q.Qtype == dns.TypeAAAA && a.Is6():
			m.Answer = append(m.Answer, &dns.AAAA{Hdr: hdr, AAAA: a.AsSlice()})
		}
	}
	w.WriteMsg(m)
}

// logBuf collects a Proxy's log lines.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines are the lines that contain every one of subs.
func (l *logBuf) lines(subs ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.b.String(), "\n") {
		all := line != ""
		for _, s := range subs {
			all = all && strings.Contains(line, s)
		}
		if all {
			out = append(out, line)
		}
	}
	return out
}

// events collects OnOpen and OnClose.
type events struct {
	mu     sync.Mutex
	opened []Conn
	closed chan Conn
}

func newEvents() *events { return &events{closed: make(chan Conn, 1024)} }

func (e *events) open(c *Conn) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.opened = append(e.opened, *c)
}

func (e *events) close(c *Conn) { e.closed <- *c }

// next waits for the next connection's end.
func (e *events) next(t *testing.T) Conn {
	t.Helper()
	return <-e.closed
}

func (e *events) openedByID(id uint64) (Conn, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range e.opened {
		if c.ID == id {
			return c, true
		}
	}
	return Conn{}, false
}

// rig is a Proxy served on loopback sockets as the sandbox would hand them.
type rig struct {
	t      testing.TB
	p      *Proxy
	dns    *hostDNS
	log    *logBuf
	ev     *events
	stub   string // the stub's UDP address
	stubTC string // and TCP
	stop   func()

	mu     sync.Mutex
	dialed []netip.AddrPort // what the proxy dialled upstream
	route  map[netip.AddrPort]string
}

type rigOptions struct {
	allow, deny []string
	maxConns    int
	ttl         uint32
	// listen are the addresses the capture listeners are bound to, for
	// each port of the policy.
	listen []string
}

func newRig(t testing.TB, o rigOptions) *rig {
	t.Helper()
	rules, err := policy.ParseHostRules(o.allow, o.deny)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, log: &logBuf{}, ev: newEvents(), route: map[netip.AddrPort]string{}}
	r.dns = startHostDNS(t, o.ttl)
	r.p, err = New(Options{
		Rules:     rules,
		Resolver:  r.dns.addr,
		Synthetic: testSynthetic,
		Log:       slog.New(slog.NewTextHandler(r.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		OnOpen:    r.ev.open,
		OnClose:   r.ev.close,
		MaxConns:  o.maxConns,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.p.Close() })
	// Production dials straight; here an address of a documentation range
	// can stand for a loopback server (it has no route on this host).
	real := r.p.dial
	r.p.dial = func(ctx context.Context, to netip.AddrPort) (net.Conn, error) {
		r.mu.Lock()
		r.dialed = append(r.dialed, to)
		via, ok := r.route[to]
		r.mu.Unlock()
		if ok {
			to = netip.MustParseAddrPort(via)
		}
		return real(ctx, to)
	}
	r.serve(o.listen)
	return r
}

// serve hands the Proxy fresh sockets, as each start of the server does.
func (r *rig) serve(listen []string) {
	t := r.t
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.stub, r.stubTC = pc.LocalAddr().String(), tl.Addr().String()
	ports, _ := r.p.Capture()
	var ls []net.Listener
	for _, port := range ports {
		for _, a := range listen {
			l, err := net.Listen("tcp", net.JoinHostPort(a, strconv.Itoa(int(port))))
			if err != nil {
				t.Fatal(err)
			}
			ls = append(ls, l)
		}
	}
	r.stop = r.p.Serve(pc, tl, ls)
	t.Cleanup(r.stop)
}

// routeTo makes the proxy's dial of from reach to instead.
func (r *rig) routeTo(from, to string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.route[netip.MustParseAddrPort(from)] = to
}

func (r *rig) dials() []netip.AddrPort {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]netip.AddrPort(nil), r.dialed...)
}

// query asks the stub over UDP.
func (r *rig) query(name string, qtype uint16) *dns.Msg {
	r.t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	resp, err := dns.Exchange(m, r.stub)
	if err != nil {
		r.t.Fatalf("asking the stub for %s: %v", name, err)
	}
	return resp
}

// lookup is the stub's A answer for name.
func (r *rig) lookup(name string) netip.Addr {
	r.t.Helper()
	resp := r.query(name, dns.TypeA)
	if resp.Rcode != dns.RcodeSuccess || len(resp.Answer) != 1 {
		r.t.Fatalf("stub's answer for %s: %v", name, resp)
	}
	a, _ := netip.AddrFromSlice(resp.Answer[0].(*dns.A).A)
	return a.Unmap()
}

// resolver is a Go resolver that asks the stub, as the server's libc would.
func (r *rig) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		if strings.HasPrefix(network, "tcp") {
			return d.DialContext(ctx, network, r.stubTC)
		}
		return d.DialContext(ctx, network, r.stub)
	}}
}

// upstream is a loopback TCP server: each connection is given to serve.
type upstream struct {
	l        net.Listener
	port     uint16
	mu       sync.Mutex
	accepted int
}

func startUpstream(t testing.TB, serve func(net.Conn)) *upstream {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &upstream{l: l, port: uint16(l.Addr().(*net.TCPAddr).Port)}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			u.mu.Lock()
			u.accepted++
			u.mu.Unlock()
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return u
}

func (u *upstream) at(host string) string { return net.JoinHostPort(host, strconv.Itoa(int(u.port))) }

// echo copies back what it reads.
func echo(c net.Conn) { io.Copy(c, c) }

// echoOnce dials to, round-trips msg through it and hangs up.
func echoOnce(t *testing.T, to, msg string) {
	t.Helper()
	c, err := net.Dial("tcp", to)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	roundTrip(t, c, msg)
}

// roundTrip writes msg and reads as many bytes back.
func roundTrip(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	if _, err := io.WriteString(c, msg); err != nil {
		t.Fatalf("writing: %v", err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("reading the echo: %v", err)
	}
	if string(got) != msg {
		t.Fatalf("echo %q, want %q", got, msg)
	}
}

// dialRefused connects to to and expects the proxy to reset the connection:
// the connect itself may see the reset on loopback, else the first read.
func dialRefused(t *testing.T, to string) {
	t.Helper()
	c, err := net.Dial("tcp", to)
	if err != nil {
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("dial %s: %v: want a reset", to, err)
		}
		return
	}
	defer c.Close()
	n, err := c.Read(make([]byte, 1))
	if n != 0 || !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read %d bytes, err %v: want the connection reset", n, err)
	}
}
