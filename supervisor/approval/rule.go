package approval

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor/mcprules"
)

// Options are what the rule is told.
type Options struct {
	Policy policy.Policy // its approval tiers, --approval-timeout and what the sandbox grants
	Server string        // the server's ID in the lock (deferred approvals)
	Name   string        // its name, as the person who decides knows it
	Lock   string        // the lock file that keeps deferred approvals
	// Mask summarises a call's arguments with secrets masked (the audit's
	// masker); nil: the arguments are not shown.
	Mask func(arguments []byte) string
	Now  func() time.Time // nil: time.Now
	// Known are tools as the lock pins them (their canonical text, the
	// policy's overrides applied): their annotations count from the start,
	// whatever the server lists later.
	Known []json.RawMessage
	// Overrides raise tools' annotations (--tool-override) for a server
	// whose list mcpsandbox has not pinned.
	Overrides map[string]policy.ToolOverride
	// Notify, when set, tells a person that a call waits for `mcpsandbox
	// approve` (a desktop notification); called once per approval asked,
	// never for a host's retries. It must not block.
	Notify func(summary, body string)
}

// Rule is the approval rule of one session (one host connection): the
// session's grants and the requestStates it signed live and die with it.
type Rule struct {
	globs   []string
	tiers   map[string]bool
	timeout time.Duration
	server  string
	name    string
	lock    string
	reach   string
	mask    func([]byte) string
	notify  func(summary, body string)
	now     func() time.Time
	key     []byte
	session string

	// mu guards what Decide, on a goroutine of its own, shares with the
	// calls the relay makes under its lock.
	mu          sync.Mutex
	elicitation bool             // the host declared elicitation at initialize
	annotated   map[string]bool  // tools an annotation tier holds
	granted     map[string]bool  // tools allowed for this session
	used        map[string]int64 // nonces of requestStates taken, to their expiry
	// continuing are calls allowed once in a 2026-07-28 session (tool and
	// argument digest) to when that approval lapses: the server may answer
	// such a call with an input_required result of its own, and the host's
	// retries then carry the server's requestState, not mcpsandbox's.
	continuing map[string]time.Time
}

// New returns the rule of o's policy, or nil when it names no tier.
func New(o Options) *Rule {
	p := o.Policy
	if len(p.ApproveTools) == 0 && len(p.ApproveAnnotated) == 0 {
		return nil
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Mask == nil {
		o.Mask = func([]byte) string { return "(not shown)" }
	}
	if o.Name == "" {
		o.Name = o.Server
	}
	r := &Rule{
		globs: p.ApproveTools, tiers: tierSet(p.ApproveAnnotated), timeout: p.ApprovalTimeout,
		server: o.Server, name: o.Name, lock: o.Lock, reach: Reach(p), mask: o.Mask, notify: o.Notify, now: o.Now,
		key: processKey(), session: hex.EncodeToString([]byte(nonce())),
		annotated: map[string]bool{}, granted: map[string]bool{}, used: map[string]int64{},
		continuing: map[string]time.Time{},
	}
	if len(r.tiers) > 0 {
		r.known(o.Known, o.Overrides)
	}
	return r
}

func (r *Rule) HostRequest(msg []byte, e *jsonrpc.Envelope) (mcprules.Verdict, mcprules.Call) {
	switch {
	case e.MethodIs("tools/call"):
		return r.toolCall(e.Params)
	case e.MethodIs("tools/list") && len(r.tiers) > 0:
		return mcprules.Verdict{}, listCall{r}
	case e.MethodIs("initialize"):
		r.initialized(e.Params)
	}
	return mcprules.Verdict{}, nil
}

func (r *Rule) ServerNotification([]byte, *jsonrpc.Envelope) bool { return true }

// initialized notes whether the host can be asked in a classic session.
func (r *Rule) initialized(params []byte) {
	var p struct {
		Capabilities struct {
			Elicitation map[string]json.RawMessage `json:"elicitation"`
		} `json:"capabilities"`
	}
	json.Unmarshal(params, &p)
	r.mu.Lock()
	r.elicitation = formElicitation(p.Capabilities.Elicitation)
	r.mu.Unlock()
}

// formElicitation reports whether a client's elicitation capability takes
// forms: {} (forms, before modes existed) or one naming form.
func formElicitation(c map[string]json.RawMessage) bool {
	if c == nil {
		return false
	}
	_, form := c["form"]
	return form || len(c) == 0
}

// listCall reads the tools/list result for annotation tiers.
type listCall struct{ r *Rule }

func (listCall) Timeout() time.Duration { return 0 }
func (listCall) End()                   {}
func (c listCall) Result(result []byte) ([]byte, *mcprules.Refusal) {
	c.r.listed(result)
	return nil, nil
}

// Reach says in a line what the sandbox lets a server under p reach, for
// the person deciding.
func Reach(p policy.Policy) string {
	if p.Unconfined {
		return "everything you can (it runs unconfined)"
	}
	var parts []string
	if len(p.ReadWrite) > 0 {
		parts = append(parts, "writes "+strings.Join(p.ReadWrite, ", "))
	}
	if len(p.ReadOnly) > 0 {
		parts = append(parts, "reads "+strings.Join(p.ReadOnly, ", "))
	}
	if p.GrantArgs == policy.GrantRW || p.GrantArgs == policy.GrantRO {
		parts = append(parts, fmt.Sprintf("the paths among its arguments (%s)", p.GrantArgs))
	}
	switch p.Net {
	case policy.NetHost:
		parts = append(parts, "the network")
	case policy.NetEgress:
		parts = append(parts, "the hosts "+strings.Join(p.AllowHosts, ", "))
	default:
		parts = append(parts, "no network")
	}
	return strings.Join(parts, "; ")
}
