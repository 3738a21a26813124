package egress

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"
)

// dialTimeout bounds resolving and connecting for one connection.
const dialTimeout = 20 * time.Second

// refusal is a connection the floor or the resolution stopped: not an
// error of the network but a decision, with why and the fix.
type refusal struct {
	reason, fix string
}

// dialName resolves name on the host side, keeps the addresses the floor
// lets through and connects to the first that answers. The address
// connected to is the one checked: nothing is resolved again.
func (p *Proxy) dialName(ctx context.Context, name string, port uint16) (net.Conn, netip.Addr, *refusal, error) {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	addrs, err := p.resolver.lookup(ctx, name)
	if err != nil {
		return nil, netip.Addr{}, nil, fmt.Errorf("resolving %s on the host: %w", name, err)
	}
	var ok []netip.Addr
	var refused []string
	var first netip.Addr
	for _, a := range addrs {
		if why := p.floor.refuses(a); why != "" {
			if !first.IsValid() {
				first = a
			}
			refused = append(refused, a.String()+" ("+why+")")
			continue
		}
		ok = append(ok, a)
	}
	if len(ok) == 0 {
		return nil, first, &refusal{
			reason: fmt.Sprintf("%s resolved to %s, which the SSRF floor refuses unless the policy names the address itself", name, strings.Join(refused, ", ")),
			fix:    allowFlag(first, port),
		}, nil
	}
	var last error
	for i, a := range ok {
		// Each address gets its share of the time left, as net.Dialer
		// gives it, so that one that never answers leaves time for the next.
		deadline, _ := ctx.Deadline()
		try, cancel := context.WithDeadline(ctx, time.Now().Add(time.Until(deadline)/time.Duration(len(ok)-i)))
		c, err := p.dial(try, netip.AddrPortFrom(a, port))
		cancel()
		if err == nil {
			return c, a, nil, nil
		}
		last = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, ok[0], nil, last
}

// dialAddr connects to an IP literal the policy allowed (so names, and the
// floor lets through; checked again all the same).
func (p *Proxy) dialAddr(ctx context.Context, a netip.Addr, port uint16) (net.Conn, *refusal, error) {
	if why := p.floor.refuses(a); why != "" {
		return nil, &refusal{reason: fmt.Sprintf("%s is %s, which the SSRF floor refuses unless the policy names the address itself", a, why), fix: allowFlag(a, port)}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	c, err := p.dial(ctx, netip.AddrPortFrom(a, port))
	return c, nil, err
}
