package egress

import (
	"log/slog"
	"sync"
)

// MaxDeniedHosts bounds the hosts a Proxy names as denied: a hostile
// server asking for millions of names gets them counted, not kept.
const MaxDeniedHosts = 16

// DeniedHost is one host the server tried and the policy does not allow:
// a name it looked up, or a destination it connected to.
type DeniedHost struct {
	Host string // the name, or the address, as the server asked for it
	Fix  string // the flag that allows it: "--allow-host mcp.example.com"
}

// Denied is what a server tried that its policy does not allow.
type Denied struct {
	Hosts  []DeniedHost // distinct, the first denied first; at most MaxDeniedHosts
	Others uint64       // denials of hosts past those
}

// deniedHosts records denied hosts, bounded. Each denial is numbered, so
// that a caller can ask what was denied since a moment (Proxy.Denials).
type deniedHosts struct {
	mu     sync.Mutex
	n      uint64            // denials so far
	hosts  []DeniedHost      // the first MaxDeniedHosts distinct ones
	last   map[string]uint64 // host and fix → the number of its latest denial
	others uint64            // denials of hosts not kept
	otherN uint64            // the number of the latest of those
}

func (d *deniedHosts) note(host, fix string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.n++
	if d.last == nil {
		d.last = make(map[string]uint64)
	}
	key := host + "\x00" + fix // a host on two ports has two fixes
	if _, ok := d.last[key]; !ok && len(d.hosts) < MaxDeniedHosts {
		d.hosts = append(d.hosts, DeniedHost{Host: host, Fix: fix})
	}
	if _, ok := d.last[key]; ok || len(d.last) < MaxDeniedHosts {
		d.last[key] = d.n
		return
	}
	d.others++
	d.otherN = d.n
}

// since is what was denied after denial number n (0: ever).
func (d *deniedHosts) since(n uint64) Denied {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out Denied
	for _, h := range d.hosts {
		if d.last[h.Host+"\x00"+h.Fix] > n {
			out.Hosts = append(out.Hosts, h)
		}
	}
	if d.otherN > n {
		out.Others = d.others
	}
	return out
}

// Denials numbers the denials so far: Denied(Denials()) later is what was
// denied from now on.
func (p *Proxy) Denials() uint64 {
	p.denied.mu.Lock()
	defer p.denied.mu.Unlock()
	return p.denied.n
}

// Denied is what the server tried after denial number n (0: since the
// Proxy was made) that the policy does not allow.
func (p *Proxy) Denied(n uint64) Denied { return p.denied.since(n) }

// NewOffline makes the Proxy of a server with no network at all: its
// resolver (sandbox.Spec.Resolver) answers every name NXDOMAIN, so the
// server fails at once with "not found" instead of waiting, and the name
// is noted (Denied) and logged with the --allow-host that would let the
// server reach it. It reads no resolv.conf and carries no connection.
func NewOffline(log *slog.Logger) *Proxy {
	p := &Proxy{
		log:      log,
		names:    newNames(DefaultSynthetic, 0),
		offline:  true,
		serving:  make(map[*serving]bool),
		maxConns: DefaultMaxConns,
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	return p
}
