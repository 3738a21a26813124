package supervisor

import (
	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
	"github.com/mcpsandbox/mcpsandbox/supervisor/mcprules"
	"github.com/mcpsandbox/mcpsandbox/supervisor/serverreq"
)

// The server's own requests to the host go through the policy's gate
// (package serverreq): a classic request here, one call under r.mu; a
// 2026-07-28 input_required result through the rule seam, as the gate's
// Rule, the innermost of the chain.

// gateServerRequests makes the relay's gate, once the audit log is open.
func (r *relay) gateServerRequests() {
	r.gate = serverreq.New(r.pol, serverreq.Options{Setting: r.setting, Audit: r.audit})
	r.rules = mcprules.Chain(r.rules, serverreq.NewRule(r.gate))
}

// gateLocked asks the gate about a server request with id orig. It
// returns the params to relay it with (nil: as sent), or false when the
// request is answered to the server instead (acts.refusal): it never
// reaches the host. r.mu is held.
func (r *relay) gateLocked(g *generation, e *jsonrpc.Envelope, orig []byte, acts *serverActs) ([]byte, bool) {
	if r.gate == nil {
		return nil, true
	}
	v := r.gate.Decide(e.MethodString(), e.Params)
	r.gate.Record(&v, serverreq.ViaRequest)
	switch {
	case v.Outcome == serverreq.Relayed:
		return v.Params, true
	case v.Outcome == serverreq.Declined && v.Decline != nil:
		acts.refusal = jsonrpc.NewResult(orig, v.Decline)
	case v.Outcome == serverreq.Declined:
		acts.refusal = jsonrpc.NewError(orig, serverreq.DeclineCode, serverreq.DeclineMessage, nil)
	default:
		acts.refusal = errorResponse(orig, CodeServerRequestRefused, "mcpsandbox refused the request: "+v.Reason, errorData{Reason: v.Reason, Generation: g.n})
	}
	acts.refusedWhy, acts.declined, acts.quiet = v.Reason, v.Outcome == serverreq.Declined, v.Quiet
	return nil, false
}
