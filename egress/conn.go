package egress

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Conn is one connection the server made, as OnOpen and OnClose see it.
type Conn struct {
	ID       uint64
	Name     string     // the host name, "" for an IP literal
	Port     uint16     // the port the server connected to (and the one dialled)
	Dest     netip.Addr // the address the server connected to: synthetic for a name
	Addr     netip.Addr // the address dialled (or refused by the SSRF floor)
	Allowed  bool
	Reason   string // why it was denied
	Fix      string // the flag that would allow it, when one would
	Start    time.Time
	Duration time.Duration
	// BytesUp went from the server to the host, BytesDown back.
	BytesUp, BytesDown int64
	Err                error // how an allowed connection failed or ended badly
}

// Host is the name, or the address for an IP literal.
func (c *Conn) Host() string {
	if c.Name != "" {
		return c.Name
	}
	return c.Dest.String()
}

// flow is one accepted connection and, once dialled, its upstream end.
type flow struct {
	client  net.Conn
	release func() // its slot of MaxConns

	mu      sync.Mutex
	up      net.Conn
	aborted bool
}

// setUp records the upstream end; false (and up closed) when the flow was
// aborted meanwhile.
func (f *flow) setUp(up net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.aborted {
		up.Close()
		return false
	}
	f.up = up
	return true
}

func (f *flow) abort() {
	f.mu.Lock()
	f.aborted = true
	up := f.up
	f.mu.Unlock()
	f.client.Close()
	if up != nil {
		up.Close()
	}
}

// handle decides one accepted connection and carries it if allowed.
func (p *Proxy) handle(ctx context.Context, f *flow) {
	c := &Conn{ID: p.ids.Add(1), Start: time.Now()}
	dest := addrPortOf(f.client.LocalAddr())
	c.Dest, c.Port = dest.Addr().Unmap(), dest.Port()

	if r := p.decide(c); r != nil {
		p.deny(f, c, r)
		return
	}
	c.Allowed = true
	var up net.Conn
	var r *refusal
	var err error
	if c.Name != "" {
		up, c.Addr, r, err = p.dialName(ctx, c.Name, c.Port)
	} else {
		c.Addr = c.Dest
		up, r, err = p.dialAddr(ctx, c.Dest, c.Port)
	}
	if r != nil {
		c.Allowed = false
		p.deny(f, c, r)
		return
	}
	if err == nil && !f.setUp(up) {
		err = errStopped
	}
	p.event(p.onOpen, c)
	if err != nil {
		c.Err = err
		reset(f.client)
	} else {
		p.log.Debug("egress: connection open", c.attrs()...)
		c.BytesUp, c.BytesDown, c.Err = relay(f.client, up)
	}
	c.Duration = time.Since(c.Start)
	f.release()
	if up == nil {
		// Failed before a byte moved: as repeatable at will as a denial.
		p.noteDenial(fmt.Sprintf("failed %s:%d", c.Host(), c.Port), "egress: connection", c.attrs()...)
	} else {
		p.log.Info("egress: connection", c.attrs()...)
	}
	p.event(p.onClose, c)
}

// decide applies the policy to where the server connected; nil is allowed.
func (p *Proxy) decide(c *Conn) *refusal {
	if p.names.prefix.Contains(c.Dest) {
		name, ok := p.names.name(c.Dest)
		if !ok {
			return &refusal{reason: fmt.Sprintf("%s is in the synthetic range but the DNS stub gave it to no name", c.Dest)}
		}
		c.Name = name
		allowed, by := p.rules.DecideName(name, c.Port)
		if !allowed {
			return denial(name, c.Port, by)
		}
		return nil
	}
	allowed, by := p.rules.DecideAddr(c.Dest, c.Port)
	if !allowed {
		return denial(c.Dest.String(), c.Port, by)
	}
	return nil
}

func denial(host string, port uint16, by *policy.HostSpec) *refusal {
	if by != nil {
		return &refusal{
			reason: fmt.Sprintf("%s port %d is denied by --deny-host %s", host, port, by.Text),
			fix:    "drop --deny-host " + by.Text,
		}
	}
	return &refusal{
		reason: fmt.Sprintf("%s port %d is not allowed: no --allow-host names it", host, port),
		fix:    policy.AllowFlag(host, port),
	}
}

// allowFlag is the --allow-host naming an address that the floor refused.
func allowFlag(a netip.Addr, port uint16) string {
	if !a.IsValid() {
		return ""
	}
	return policy.AllowFlag(a.String(), port)
}

// deny resets a connection and reports it, its log line rate-limited per
// destination.
func (p *Proxy) deny(f *flow, c *Conn, r *refusal) {
	reset(f.client)
	f.release()
	c.Reason, c.Fix = r.reason, r.fix
	c.Duration = time.Since(c.Start)
	p.denied.note(c.Host(), c.Fix)
	p.noteDenial(fmt.Sprintf("%s:%d", c.Host(), c.Port), "egress: connection denied", c.attrs()...)
	p.event(p.onOpen, c)
	p.event(p.onClose, c)
}

// refuseOverLimit resets a connection past MaxConns.
func (p *Proxy) refuseOverLimit(client net.Conn) {
	dest := addrPortOf(client.LocalAddr())
	reset(client)
	c := &Conn{ID: p.ids.Add(1), Start: time.Now(), Dest: dest.Addr().Unmap(), Port: dest.Port()}
	if name, ok := p.names.name(c.Dest); ok {
		c.Name = name
	}
	c.Reason = fmt.Sprintf("%d connections are open already, the most a server may have", p.maxConns)
	p.noteDenial("over the limit", "egress: connection refused", c.attrs()...)
	p.event(p.onOpen, c)
	p.event(p.onClose, c)
}

// noteDenial logs a denial (or a failure to connect) unless it repeats
// one logged before: see repeats.
func (p *Proxy) noteDenial(key, msg string, attrs ...any) {
	n, log, shared := p.denials.note(key)
	if !log {
		return
	}
	if shared {
		attrs = append(attrs, "note", fmt.Sprintf("denials of %d or more distinct destinations are counted together: %d so far", maxRepeatKeys, n))
	} else if n > 1 {
		attrs = append(attrs, "repeated", n)
	}
	p.log.Warn(msg, attrs...)
}

func (p *Proxy) event(fn func(*Conn), c *Conn) {
	if fn != nil {
		cp := *c
		fn(&cp)
	}
}

func (c *Conn) attrs() []any {
	a := []any{"id", c.ID, "host", c.Host(), "port", c.Port}
	if c.Name != "" {
		a = append(a, "dest", c.Dest.String())
	}
	if c.Addr.IsValid() {
		a = append(a, "addr", c.Addr.String())
	}
	a = append(a, "allowed", c.Allowed)
	if c.Reason != "" {
		a = append(a, "reason", c.Reason)
	}
	if c.Fix != "" {
		a = append(a, "fix", c.Fix)
	}
	if c.Duration > 0 || c.BytesUp > 0 || c.BytesDown > 0 {
		a = append(a, "up", c.BytesUp, "down", c.BytesDown, "duration", c.Duration)
	}
	if c.Err != nil {
		a = append(a, slog.Any("err", c.Err))
	}
	return a
}
