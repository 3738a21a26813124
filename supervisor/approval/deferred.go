package approval

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
	"github.com/mcpsandbox/mcpsandbox/lock"
	"github.com/mcpsandbox/mcpsandbox/supervisor/mcprules"
)

const chanDeferred = "deferred"

// deferred decides a call of a host that cannot be asked: the lock keeps
// the approval `mcpsandbox approve ID` grants, and the call's retry with the
// same arguments takes it. It is a Pending only to keep the lock's file
// out of the relay's lock; it never waits for a person.
type deferred struct {
	r                     *Rule
	tool, digest, summary string
}

func (p *deferred) Decide(ctx context.Context, _ mcprules.Host) mcprules.Decision {
	r := p.r
	now := r.now()
	state, a, id, err := lock.TakeApproval(r.lock, r.server, p.tool, p.digest, now)
	if err != nil {
		return p.unrecorded(err)
	}
	switch state {
	case lock.ApprovalGranted:
		return mcprules.Decision{Approval: &mcprules.Approval{Channel: chanDeferred, Decision: allowOnce, ID: id, Waited: a.Approved.Sub(a.Asked)}}
	case lock.ApprovalExpired:
		ap := &mcprules.Approval{Channel: chanDeferred, Decision: "expired", ID: id}
		return mcprules.Decision{Approval: ap, Refusal: denial(fmt.Sprintf(
			"approval %s of tool %q expired at %s before this call took it; call the tool again to be asked anew", id, p.tool, a.Expires.Format(time.RFC3339)), "expired", ap)}
	}
	// Whole seconds, rounded up: the host's data.expires and the lock's
	// are then the same instant.
	expires := now.Add(r.timeout + time.Second - 1).Truncate(time.Second)
	id, err = lock.AskApproval(r.lock, lock.Approval{Server: r.server, Name: r.name, Tool: p.tool, Digest: p.digest,
		Summary: p.summary, Asked: now, Expires: expires}, now)
	if err != nil {
		return p.unrecorded(err)
	}
	if state == lock.ApprovalNone && r.notify != nil {
		r.notify(fmt.Sprintf("%s waits for your approval", p.tool),
			fmt.Sprintf("%s wants to run %s with %s.\nRun: %s", r.name, p.tool, p.summary, r.approveCommand(id)))
	}
	ap := &mcprules.Approval{Channel: chanDeferred, Decision: "required", ID: id}
	return mcprules.Decision{Approval: ap, Refusal: &mcprules.Refusal{Kind: mcprules.ApprovalRequired, Reason: "approval required",
		ApprovalID: id, Expires: expires, Approval: ap,
		Message: fmt.Sprintf("mcpsandbox: tool %q of server %q waits for a person's approval, and this host cannot be asked: run `%s` before %s, then call it again with the same arguments",
			p.tool, r.name, r.approveCommand(id), expires.UTC().Format(time.RFC3339))}}
}

// unrecorded denies a call whose approval the lock could not keep.
func (p *deferred) unrecorded(err error) mcprules.Decision {
	ap := &mcprules.Approval{Channel: chanDeferred, Decision: "deny"}
	return mcprules.Decision{Approval: ap, Refusal: denial(fmt.Sprintf("the call of tool %q waits for approval, but the lock could not keep it: %v", p.tool, err), "lock", ap)}
}

// approveCommand is the command that grants id, naming the lock when it is
// not the user's own.
func (r *Rule) approveCommand(id string) string {
	if def, err := lock.DefaultPath(); err == nil && def == r.lock {
		return "mcpsandbox approve " + id
	}
	return cmdline.ShellJoin([]string{"mcpsandbox", "approve", id, "--lock", r.lock})
}
