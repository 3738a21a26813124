package egress

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// DefaultSynthetic is the range the DNS stub takes addresses from: the
// benchmarking range (RFC 2544), which no real host uses.
var DefaultSynthetic = netip.MustParsePrefix("198.18.0.0/15")

// DefaultMaxConns is how many connections may be open at once.
const DefaultMaxConns = 256

// Options configure a Proxy.
type Options struct {
	Rules      policy.HostRules
	Resolver   string       // "ADDR[:PORT]" of the host-side DNS server; "" = the nameservers of ResolvConf
	ResolvConf string       // "" = /etc/resolv.conf
	Synthetic  netip.Prefix // zero = DefaultSynthetic
	Log        *slog.Logger // nil discards
	// OnOpen is called for each connection, allowed or not, before any
	// byte moves; OnClose at its end, with byte counts and duration. Each
	// gets its own copy: match them by ID.
	OnOpen, OnClose func(*Conn)
	MaxConns        int // open connections at once; 0 = DefaultMaxConns
}

// Proxy is the policy side of one relay's egress: the DNS stub's names, the
// host-side resolver and the connections. It outlives the server's
// restarts: Serve is called once per start, and names keep their synthetic
// addresses across them.
type Proxy struct {
	rules    policy.HostRules
	ports    []uint16
	log      *slog.Logger
	onOpen   func(*Conn)
	onClose  func(*Conn)
	maxConns int

	names    *names
	resolver *resolver
	floor    floor
	// dial connects to a checked address; tests point documentation
	// addresses at loopback servers through it.
	dial func(ctx context.Context, to netip.AddrPort) (net.Conn, error)

	ids      atomic.Uint64
	open     atomic.Int64
	denials  repeats
	dnsNotes repeats
	denied   deniedHosts
	offline  bool // NewOffline's: no network, every name denied

	mu      sync.Mutex
	closed  bool
	serving map[*serving]bool
}

// New checks the options and makes a Proxy; it reads resolv.conf once to
// find a nameserver, and fails naming the fix when there is none.
func New(o Options) (*Proxy, error) {
	syn := o.Synthetic
	if !syn.IsValid() {
		syn = DefaultSynthetic
	}
	if syn != syn.Masked() {
		return nil, fmt.Errorf("egress: synthetic range %s has host bits set: write %s", syn, syn.Masked())
	}
	if capacity(syn, maxNames) < 1 {
		return nil, fmt.Errorf("egress: synthetic range %s is too small to give any address", syn)
	}
	if o.MaxConns < 0 {
		return nil, fmt.Errorf("egress: MaxConns %d is negative: give 0 for the default, %d", o.MaxConns, DefaultMaxConns)
	}
	res, err := newResolver(o.Resolver, o.ResolvConf)
	if err != nil {
		return nil, fmt.Errorf("egress: %w", err)
	}
	p := &Proxy{
		rules:    o.Rules,
		ports:    o.Rules.Ports(),
		log:      o.Log,
		onOpen:   o.OnOpen,
		onClose:  o.OnClose,
		maxConns: o.MaxConns,
		names:    newNames(syn, maxNames),
		resolver: res,
		floor:    floor{names: o.Rules.NamesAddr, synthetic: syn},
		serving:  make(map[*serving]bool),
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.maxConns == 0 {
		p.maxConns = DefaultMaxConns
	}
	p.dial = func(ctx context.Context, to netip.AddrPort) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", to.String())
	}
	return p, nil
}

// Capture is what the sandbox must route to the server's namespace's own
// listeners: the ports any allow entry allows, and the synthetic range
// with every address range an allow entry names.
func (p *Proxy) Capture() (ports []uint16, local []netip.Prefix) {
	return CaptureOf(p.rules, p.names.prefix)
}

// Serve answers DNS on dns and dnsTCP and carries the connections accepted
// on tcp, taking ownership of them all (a nil one is skipped). It returns
// at once; stop closes the listeners and every connection they accepted,
// and returns once each has ended and its OnClose has run.
func (p *Proxy) Serve(dns net.PacketConn, dnsTCP net.Listener, tcp []net.Listener) (stop func()) {
	s := &serving{p: p, conns: make(map[*flow]bool)}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		closeAll(dns, dnsTCP, tcp)
		return func() {}
	}
	p.serving[s] = true
	p.mu.Unlock()

	if dns != nil {
		s.dns = append(s.dns, startDNS(p, dns, nil))
	}
	if dnsTCP != nil {
		s.dns = append(s.dns, startDNS(p, nil, dnsTCP))
	}
	for _, l := range tcp {
		if l == nil {
			continue
		}
		s.listeners = append(s.listeners, l)
		s.wg.Add(1)
		go s.accept(l)
	}
	var once sync.Once
	return func() { once.Do(s.stop) }
}

// Close stops whatever is still served; a later Serve closes what it is
// given and serves nothing.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	all := make([]*serving, 0, len(p.serving))
	for s := range p.serving {
		all = append(all, s)
	}
	p.mu.Unlock()
	for _, s := range all {
		s.stop()
	}
	return nil
}

func closeAll(dns net.PacketConn, dnsTCP net.Listener, tcp []net.Listener) {
	if dns != nil {
		dns.Close()
	}
	if dnsTCP != nil {
		dnsTCP.Close()
	}
	for _, l := range tcp {
		if l != nil {
			l.Close()
		}
	}
}

// serving is what one Serve call runs.
type serving struct {
	p         *Proxy
	ctx       context.Context
	cancel    context.CancelFunc
	dns       []*dnsServer
	listeners []net.Listener
	wg        sync.WaitGroup
	stopOnce  sync.Once

	mu     sync.Mutex
	closed bool
	conns  map[*flow]bool
}

func (s *serving) stop() {
	s.stopOnce.Do(func() {
		s.cancel()
		for _, l := range s.listeners {
			l.Close()
		}
		s.mu.Lock()
		s.closed = true
		for f := range s.conns {
			f.abort()
		}
		s.mu.Unlock()
		for _, d := range s.dns {
			d.stop()
		}
		s.wg.Wait()
		s.p.mu.Lock()
		delete(s.p.serving, s)
		s.p.mu.Unlock()
	})
}

// accept hands each connection of l to its own goroutine, refusing those
// past MaxConns.
func (s *serving) accept(l net.Listener) {
	defer s.wg.Done()
	var backoff time.Duration
	for {
		c, err := l.Accept()
		if err != nil {
			if s.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of descriptors or the like: wait a little, as net/http does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.p.log.Warn("egress: accepting a connection", "err", err, "retry_in", backoff)
			select {
			case <-time.After(backoff):
			case <-s.ctx.Done():
				return
			}
			continue
		}
		backoff = 0
		if s.p.open.Add(1) > int64(s.p.maxConns) {
			s.p.open.Add(-1)
			s.p.refuseOverLimit(c)
			continue
		}
		f := &flow{client: c}
		// Released before OnClose runs, so that whoever OnClose tells may
		// open the next connection at once.
		f.release = sync.OnceFunc(func() {
			s.untrack(f)
			s.p.open.Add(-1)
		})
		if !s.track(f) {
			f.release()
			reset(c)
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer f.release()
			s.p.handle(s.ctx, f)
		}()
	}
}

func (s *serving) track(f *flow) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[f] = true
	return true
}

func (s *serving) untrack(f *flow) {
	s.mu.Lock()
	delete(s.conns, f)
	s.mu.Unlock()
}
