package mcprules

import (
	"context"
	"time"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
)

// Chain composes two Rules the way middleware nests: a host request goes
// through outer first (the policy's rules may refuse it, or rename a
// prefixed tool), then inner, which sees the params outer left (the
// server's own names); a result goes back through inner first, then outer.
// A server notification reaches the host only when both let it through,
// and inner sees it first (a list_changed concerns both). Either may be
// nil: Chain returns the other.
func Chain(outer, inner Rules) Rules {
	switch {
	case outer == nil:
		return inner
	case inner == nil:
		return outer
	}
	return &chain{outer: outer, inner: inner}
}

type chain struct{ outer, inner Rules }

func (c *chain) HostRequest(msg []byte, e *jsonrpc.Envelope) (Verdict, Call) {
	v, oc := c.outer.HostRequest(msg, e)
	switch {
	case v.Refusal != nil:
		return v, nil
	case v.Answer != nil:
		return v, oc
	}
	ie := e
	if v.Params != nil {
		changed := *e
		changed.Params = v.Params
		ie = &changed
	}
	iv, ic := c.inner.HostRequest(msg, ie)
	if iv.Refusal != nil {
		if oc != nil {
			oc.End()
		}
		return iv, nil
	}
	if iv.Params != nil {
		v.Params = iv.Params
	}
	v = joinVerdicts(v, iv)
	switch {
	case oc == nil:
		return v, ic
	case ic == nil:
		return v, oc
	}
	return v, &chainCall{outer: oc, inner: ic}
}

func (c *chain) ServerNotification(msg []byte, e *jsonrpc.Envelope) bool {
	return c.inner.ServerNotification(msg, e) && c.outer.ServerNotification(msg, e)
}

// chainCall is one request's Calls of both rules.
type chainCall struct{ outer, inner Call }

// Timeout is the shorter of the two (0 is none).
func (c *chainCall) Timeout() time.Duration {
	o, i := c.outer.Timeout(), c.inner.Timeout()
	if o <= 0 || (i > 0 && i < o) {
		return i
	}
	return o
}

func (c *chainCall) Result(result []byte) ([]byte, *Refusal) {
	res, ref := c.inner.Result(result)
	if ref != nil {
		return nil, ref
	}
	in := result
	if res != nil {
		in = res
	}
	out, ref := c.outer.Result(in)
	if ref != nil || out != nil {
		return out, ref
	}
	return res, nil
}

func (c *chainCall) End() {
	c.inner.End()
	c.outer.End()
}

// joinVerdicts gives the outer rule's verdict what the inner one decided
// besides params: the inner's answer, its approval, and its Pending, which
// decides after the outer's (a Pending of each: both, in that order).
func joinVerdicts(v, iv Verdict) Verdict {
	if iv.Answer != nil {
		v.Answer, v.Pending = iv.Answer, nil
	}
	if iv.Approval != nil {
		v.Approval = iv.Approval
	}
	switch {
	case v.Answer != nil || iv.Pending == nil:
	case v.Pending == nil:
		v.Pending = iv.Pending
	default:
		v.Pending = pendingChain{v.Pending, iv.Pending}
	}
	return v
}

// pendingChain is two Pendings, decided one after the other: the second
// only when the first relays.
type pendingChain struct{ first, then Pending }

func (p pendingChain) Decide(ctx context.Context, host Host) Decision {
	d := p.first.Decide(ctx, host)
	if d.Refusal != nil {
		return d
	}
	d2 := p.then.Decide(ctx, host)
	if d2.Params == nil {
		d2.Params = d.Params
	}
	if d2.Approval == nil {
		d2.Approval = d.Approval
	}
	return d2
}
