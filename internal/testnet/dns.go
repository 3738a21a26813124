package testnet

import (
	"net"
	"net/netip"
	"strings"
	"sync"

	"github.com/miekg/dns"
)

// DNS is the test's own DNS server, over UDP and TCP on one address. It
// answers A queries for the names it was given, AAAA queries for them with
// no addresses, and NXDOMAIN for every other name; answers carry TTL 0
// unless SetTTL says otherwise, so nothing caches a name across a test's
// change of it.
type DNS struct {
	Addr netip.AddrPort // what --resolver is given

	mu      sync.Mutex
	answers map[string][]netip.Addr // per name, the i-th query's answer; the last repeats
	pos     map[string]int          // A queries per name since its answers were set
	queries map[string]int          // A queries per name
	ttl     uint32
	servers []*dns.Server
}

func newDNS(addr netip.AddrPort, udp net.PacketConn, tcp net.Listener) *DNS {
	d := &DNS{Addr: addr, answers: map[string][]netip.Addr{}, pos: map[string]int{}, queries: map[string]int{}}
	for _, s := range []*dns.Server{{PacketConn: udp, Handler: d}, {Listener: tcp, Handler: d}} {
		d.servers = append(d.servers, s)
		started := make(chan struct{})
		s.NotifyStartedFunc = func() { close(started) }
		go s.ActivateAndServe()
		<-started
	}
	return d
}

// Set makes name answer addr to every query from now on.
func (d *DNS) Set(name string, addr netip.Addr) { d.sequence(name, addr) }

// Rebind makes name answer first to its next query and then to every
// query after it: the rebinding attack.
func (d *DNS) Rebind(name string, first, then netip.Addr) { d.sequence(name, first, then) }

func (d *DNS) sequence(name string, addrs ...netip.Addr) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.answers[dns.CanonicalName(name)] = addrs
	d.pos[dns.CanonicalName(name)] = 0
}

// SetTTL gives answers from now on a TTL of seconds, for a benchmark of
// names cached as real ones are.
func (d *DNS) SetTTL(seconds uint32) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ttl = seconds
}

// Queries is how many A queries for name the server answered.
func (d *DNS) Queries(name string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.queries[dns.CanonicalName(name)]
}

func (d *DNS) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	if len(req.Question) != 1 {
		m.Rcode = dns.RcodeFormatError
		w.WriteMsg(m)
		return
	}
	q := req.Question[0]
	name := strings.ToLower(q.Name)
	d.mu.Lock()
	seq, known := d.answers[name]
	var addr netip.Addr
	ttl := d.ttl
	if known && q.Qtype == dns.TypeA {
		addr = seq[min(d.pos[name], len(seq)-1)]
		d.pos[name]++
		d.queries[name]++
	}
	d.mu.Unlock()
	switch {
	case !known:
		m.Rcode = dns.RcodeNameError
	case q.Qtype == dns.TypeA:
		m.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: ttl}, A: addr.AsSlice()}}
	}
	w.WriteMsg(m)
}

func (d *DNS) close() {
	for _, s := range d.servers {
		s.Shutdown()
	}
}
