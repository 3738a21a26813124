package mcprules

import (
	"context"
	"time"
)

// Pending is a rule's answer "not yet": the request waits, neither relayed
// nor timed by --call-timeout, until Decide returns. The relay calls Decide
// once, on a goroutine of its own and without its lock, so Decide must
// lock whatever it shares with the rule; ctx ends when the request does
// (the host cancels it or goes away, mcpsandbox shuts down), and Decide
// must then return promptly with a refusal.
type Pending interface {
	Decide(ctx context.Context, host Host) Decision
}

// Host is how a rule asks the host something in mcpsandbox's own name
// (elicitation/create). Requests go out through the relay's one path for
// its own requests, under ids of mcpsandbox's namespace, so an answer can
// never be taken for the server's nor reach it.
type Host interface {
	// Request sends method with params (a JSON object) to the host and
	// waits for its answer: the raw result, or an error for an error
	// response, a host that went away, or ctx's end (the host then gets
	// notifications/cancelled).
	Request(ctx context.Context, method string, params []byte) (result []byte, err error)
}

// Decision is how a Pending ends.
type Decision struct {
	// Refusal, when not nil, answers the request: it never reaches the
	// server. Nil relays it (with Params, when not nil, as its params).
	Refusal *Refusal
	Params  []byte
	// Approval is what the audit line records of the decision.
	Approval *Approval
}

// Approval is a person's decision on a call, as the audit records it.
type Approval struct {
	Channel  string        // input-required, elicitation, deferred, session (an earlier "for this session")
	Decision string        // allow-once, allow-session, deny, cancel, timeout, malformed, host-gone, required (deferred: asked, not yet approved), expired, continued (a server's own input round of a call allowed once)
	Waited   time.Duration // from the question to the answer
	ID       string        // the deferred approval's id
}

// mcpsandbox's own questions to the host carry two marks no server's
// keeps: QuestionMeta in their _meta, and a message beginning
// QuestionPrefix. The relay rewrites a server's elicitation that carries
// either (package supervisor/serverreq), so a host can tell them apart.
const (
	QuestionMeta   = "io.github.mcpsandbox/approval"
	QuestionPrefix = "mcpsandbox asks:"
)
