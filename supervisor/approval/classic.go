package approval

import (
	"context"
	"errors"

	"github.com/mcpsandbox/mcpsandbox/supervisor/mcprules"
)

// elicited holds a call of a classic session while mcpsandbox asks the host
// with its own elicitation/create.
type elicited struct {
	r                     *Rule
	tool, digest, summary string
}

func (p *elicited) Decide(ctx context.Context, host mcprules.Host) mcprules.Decision {
	r := p.r
	asked := r.now()
	ask, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	result, err := host.Request(ask, "elicitation/create", r.question(p.tool, p.summary, p.digest))
	a := &mcprules.Approval{Channel: "elicitation", Waited: r.now().Sub(asked)}
	reason := ""
	switch {
	case err != nil && errors.Is(ask.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		a.Decision, reason = "timeout", "timeout"
	case errors.As(err, new(*mcprules.HostError)):
		a.Decision, reason = "malformed", "malformed" // an error is no answer the form allows
	case err != nil:
		a.Decision, reason = "host-gone", "host-gone"
	default:
		a.Decision, reason = decide(result)
	}
	if reason != "" {
		return mcprules.Decision{Refusal: r.denied(p.tool, reason, a), Approval: a}
	}
	if a.Decision == allowSession {
		r.grant(p.tool)
	}
	return mcprules.Decision{Approval: a}
}
