package egress

import (
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// stubTTL is the TTL of the stub's answers: short, so a policy reloaded
// with another stub is asked again soon.
const stubTTL = 5

// maxDNSTCPConns bounds the stub's DNS-over-TCP connections at once.
const maxDNSTCPConns = 32

// stubHandler answers the server's queries.
type stubHandler struct{ p *Proxy }

func (h stubHandler) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	w.WriteMsg(h.p.answer(req))
}

// answer is the stub's reply to req.
func (p *Proxy) answer(req *dns.Msg) *dns.Msg {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	m.RecursionAvailable = true
	if req.Opcode != dns.OpcodeQuery {
		return m.SetRcode(req, dns.RcodeNotImplemented)
	}
	if len(req.Question) != 1 {
		return m.SetRcode(req, dns.RcodeFormatError)
	}
	q := req.Question[0]
	if q.Qclass != dns.ClassINET {
		return m.SetRcode(req, dns.RcodeRefused)
	}
	name := strings.TrimSuffix(strings.ToLower(q.Name), ".")
	if q.Qtype == dns.TypePTR {
		return p.answerPTR(m, req, q)
	}
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		// The server's own loopback, in its own namespace.
		return withAddr(m, q, netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback())
	}
	if a, err := netip.ParseAddr(name); err == nil {
		// An IP literal asked as a name: itself, for the connection to it to
		// be decided as a literal.
		return withAddr(m, q, a.Unmap(), a.Unmap())
	}
	if !validName(name) || !p.nameAllowed(name) {
		p.noteName(name)
		return m.SetRcode(req, dns.RcodeNameError)
	}
	a, ok := p.names.assign(name)
	if !ok {
		n, log, _ := p.dnsNotes.note("table full")
		if log {
			p.log.Warn("egress: DNS stub's table is full; names past it get SERVFAIL", "name", name, "names", maxNames, "refused", n)
		}
		return m.SetRcode(req, dns.RcodeServerFailure)
	}
	return withAddr(m, q, a, a)
}

// withAddr answers q with v4 for A or v6 for AAAA, when of that family;
// any other question gets no answer (NOERROR).
func withAddr(m *dns.Msg, q dns.Question, v4, v6 netip.Addr) *dns.Msg {
	hdr := dns.RR_Header{Name: q.Name, Rrtype: q.Qtype, Class: dns.ClassINET, Ttl: stubTTL}
	switch {
	case q.Qtype == dns.TypeA && v4.Is4():
		m.Answer = []dns.RR{&dns.A{Hdr: hdr, A: v4.AsSlice()}}
	case q.Qtype == dns.TypeAAAA && v6.Is6():
		m.Answer = []dns.RR{&dns.AAAA{Hdr: hdr, AAAA: v6.AsSlice()}}
	}
	return m
}

// answerPTR names a synthetic address; others get NXDOMAIN.
func (p *Proxy) answerPTR(m, req *dns.Msg, q dns.Question) *dns.Msg {
	a, ok := reverseAddr(q.Name)
	if !ok {
		return m.SetRcode(req, dns.RcodeNameError)
	}
	name, ok := p.names.name(a)
	if !ok {
		return m.SetRcode(req, dns.RcodeNameError)
	}
	m.Answer = []dns.RR{&dns.PTR{
		Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypePTR, Class: dns.ClassINET, Ttl: stubTTL},
		Ptr: dns.Fqdn(name),
	}}
	return m
}

// reverseAddr reads a name of in-addr.arpa or ip6.arpa.
func reverseAddr(name string) (netip.Addr, bool) {
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	if rest, ok := strings.CutSuffix(name, ".in-addr.arpa"); ok {
		labels := strings.Split(rest, ".")
		if len(labels) != 4 {
			return netip.Addr{}, false
		}
		for i, j := 0, 3; i < j; i, j = i+1, j-1 {
			labels[i], labels[j] = labels[j], labels[i]
		}
		a, err := netip.ParseAddr(strings.Join(labels, "."))
		return a, err == nil && a.Is4()
	}
	if rest, ok := strings.CutSuffix(name, ".ip6.arpa"); ok {
		nibbles := strings.Split(rest, ".")
		if len(nibbles) != 32 {
			return netip.Addr{}, false
		}
		var b [16]byte
		for i, n := range nibbles {
			if len(n) != 1 || !strings.Contains("0123456789abcdef", n) {
				return netip.Addr{}, false
			}
			v := byte(strings.IndexByte("0123456789abcdef", n[0]))
			k := 31 - i // the first nibble is the last of the address
			if k%2 == 0 {
				v <<= 4
			}
			b[k/2] |= v
		}
		return netip.AddrFrom16(b), true
	}
	return netip.Addr{}, false
}

// nameAllowed: some allow entry covers name on some port (deny winning on
// each).
func (p *Proxy) nameAllowed(name string) bool {
	for _, port := range p.ports {
		if ok, _ := p.rules.DecideName(name, port); ok {
			return true
		}
	}
	return false
}

// noteName notes a denied name and logs it, once, then at the 10th,
// 100th... query.
func (p *Proxy) noteName(name string) {
	fix := policy.AllowFlag(name, policy.DefaultPorts[0])
	if validName(name) { // else no flag could allow it
		p.denied.note(name, fix)
	}
	n, log, shared := p.dnsNotes.note("name " + name)
	if !log {
		return
	}
	msg := "egress: name denied (NXDOMAIN)"
	if p.offline {
		msg = "no network: the server looked up a name; answered NXDOMAIN"
	}
	attrs := []any{"name", name, "fix", fix}
	if shared {
		attrs = append(attrs, "note", "denied names past the first distinct ones are counted together", "count", n)
	} else if n > 1 {
		attrs = append(attrs, "repeated", n)
	}
	p.log.Warn(msg, attrs...)
}

// validName: labels of letters, digits, hyphens and underscores. Anything
// else (escaped bytes, empty labels) is no host the policy could name.
func validName(name string) bool {
	if name == "" || len(name) > 253 {
		return false
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// dnsServer is one miekg/dns server of the stub, on a socket it was given.
type dnsServer struct {
	srv     *dns.Server
	started chan struct{}
	done    chan struct{}
}

func startDNS(p *Proxy, pc net.PacketConn, l net.Listener) *dnsServer {
	d := &dnsServer{started: make(chan struct{}), done: make(chan struct{})}
	d.srv = &dns.Server{
		PacketConn:        pc,
		Handler:           stubHandler{p},
		NotifyStartedFunc: func() { close(d.started) },
		ReadTimeout:       2 * time.Second,
		WriteTimeout:      2 * time.Second,
	}
	if l != nil {
		d.srv.Listener = newBoundedListener(l, maxDNSTCPConns)
	}
	go func() {
		defer close(d.done)
		if err := d.srv.ActivateAndServe(); err != nil {
			p.log.Warn("egress: DNS stub stopped", "err", err)
		}
	}()
	return d
}

// stop shuts the server down and waits for it; a server that has not
// started yet (Shutdown would fail) is waited for first.
func (d *dnsServer) stop() {
	select {
	case <-d.started:
		d.srv.Shutdown()
	case <-d.done:
	}
	<-d.done
}

// boundedListener holds at most n accepted connections open at once: the
// next Accept waits for one to close.
type boundedListener struct {
	net.Listener
	slots chan struct{}
	done  chan struct{}
	once  sync.Once
}

func newBoundedListener(l net.Listener, n int) *boundedListener {
	return &boundedListener{Listener: l, slots: make(chan struct{}, n), done: make(chan struct{})}
}

func (l *boundedListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &slotConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *boundedListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

type slotConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
