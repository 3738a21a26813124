package supervisor

import (
	"context"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
	"github.com/mcpsandbox/mcpsandbox/supervisor/mcprules"
)

// A host request the rules answered "pending" (mcprules.Pending) waits in
// the table, neither relayed nor timed, while its Decide runs on a
// goroutine of its own without r.mu; the decision then relays it (and
// only then starts --call-timeout) or ends it. The request's end, however
// it comes (the host cancels it, goes away, mcpsandbox shuts down), ends
// Decide's ctx, and a decision that finds the request ended is dropped: the
// host gets one answer.

// heldCall is what the relay keeps of a request while its Pending decides.
type heldCall struct {
	out    []byte             // the request as the server is to get it (its own copy, newline-terminated)
	cancel context.CancelFunc // ends Decide's ctx
}

// holdLocked registers request req (under key) as held and starts its
// Pending's Decide. r.mu is held.
func (r *relay) holdLocked(key string, req *hostRequest, out []byte, p mcprules.Pending) {
	ctx, cancel := context.WithCancel(r.waits)
	req.wait = &heldCall{out: ownLine(out), cancel: cancel}
	r.inflight[key] = *req
	go r.decideHeld(ctx, cancel, key, req.seq, p)
}

// decideHeld runs p's Decide and acts on its decision, if the request is still
// in flight.
func (r *relay) decideHeld(ctx context.Context, cancel context.CancelFunc, key string, seq uint64, p mcprules.Pending) {
	d := p.Decide(ctx, hostAsker{r})
	cancel()
	req, ok := r.lockStillInFlight(key, seq)
	if !ok {
		return // the host cancelled it, or it ended with the session
	}
	auditApproval(req.audit, d.Approval)
	method := methodNames[req.method]
	switch {
	case d.Refusal != nil:
		auditRefusal(req.audit, d.Refusal)
		r.endLocked(key, &req, r.ruleEnd([]byte(req.hostID), method, d.Refusal, 0))
	case r.waits.Err() != nil:
		// The host went away while it was asked: whatever Decide made of
		// that, nothing is relayed (fail closed).
		ref := &mcprules.Refusal{Kind: mcprules.ApprovalDenied, Reason: "host-gone", Message: method + " was not relayed: the host went away before it was approved"}
		r.endLocked(key, &req, r.ruleEnd([]byte(req.hostID), method, ref, 0))
	default:
		r.relayHeldLocked(key, &req, d.Params)
	}
	r.unlock()
}

// relayHeldLocked sends a held request on, with params when not nil, as
// hostSingle would have at its arrival, and starts its clocks. r.mu is
// held.
func (r *relay) relayHeldLocked(key string, req *hostRequest, params []byte) {
	out := req.wait.out
	req.wait = nil
	if params != nil {
		out = withParams(out, params)
	}
	switch {
	case r.state == stateStopped || r.state == stateClosing:
		r.endLocked(key, req, r.stoppedEndLocked([]byte(req.hostID)))
		return
	case r.liveLocked():
		req.gen = r.gen.n
		r.gen.write(out)
	case !r.enqueueLocked(out):
		r.endLocked(key, req, refusal(outQueueFull, []byte(req.hostID), 0, r.queueFullMessage(), nil))
		return
	}
	r.armTimersLocked(key, req)
	r.inflight[key] = *req
}

// withParams returns the request msg with its params replaced.
func withParams(msg, params []byte) []byte {
	var sc jsonrpc.Scanner
	var b jsonrpc.Batch
	if sc.Scan(msg, &b) != nil || b.IsArray || b.Msgs[0].Params == nil {
		return msg // cannot happen: a held request scanned as one with params
	}
	p := b.Msgs[0].Params
	start := jsonrpc.OffsetIn(msg, p)
	return jsonrpc.Splice(msg, start, start+len(p), params)
}
