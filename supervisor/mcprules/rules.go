package mcprules

import (
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/secrets"
)

// Rules are what the relay asks at a host request's arrival and at a
// server's notification. The relay calls a Rules and its Calls one at a
// time (under its lock): they need no lock of their own.
type Rules interface {
	// HostRequest is called for each host request (msg, whose envelope is
	// e) before it is relayed. The Verdict refuses it or changes its
	// params; call, when not nil, follows the request to its end.
	HostRequest(msg []byte, e *jsonrpc.Envelope) (v Verdict, call Call)
	// ServerNotification reports whether a notification of the server
	// may reach the host.
	ServerNotification(msg []byte, e *jsonrpc.Envelope) bool
}

// Call is what the rules keep of one host request, from HostRequest to its
// end.
type Call interface {
	// Timeout is how long the server may take to answer; 0: no limit.
	Timeout() time.Duration
	// Result is called with the server's result (its raw result member):
	// it returns the result the host gets instead (nil: the server's, as
	// it is), or a Refusal when the result cannot be checked.
	Result(result []byte) ([]byte, *Refusal)
	// End is called once, when the request ends, however it ends.
	End()
}

// Verdict is what the rules decide about a host request.
type Verdict struct {
	// Refusal, when not nil, is the answer: the request never reaches the
	// server.
	Refusal *Refusal
	// Params, when not nil, replace the request's params (a tool's own
	// name for one the host called prefixed).
	Params []byte
	// Answer, when not nil, is the result mcpsandbox gives the host in its
	// own name instead of relaying the request (a 2026-07-28
	// input_required result carrying mcpsandbox's question).
	Answer []byte
	// Pending, when not nil, holds the request until it decides (after
	// Params are applied): see Pending.
	Pending Pending
	// Approval, when not nil, is what the audit records of an approval
	// decided at once (a signed answer, a grant for the session).
	Approval *Approval
}

// Kind says which rule refused.
type Kind uint8

const (
	Denied            Kind = iota + 1 // a tool, prompt or resource the policy hides, or a request the rules cannot read
	RateLimited                       // a tools/call over its tool's --rate-limit
	TooManyCalls                      // a tools/call while --max-concurrent-calls are in flight
	UnknownTool                       // a tools/call of a name without --tool-prefix (MCP's invalid params)
	Unreadable                        // a server's result the rules cannot check
	Held                              // an item the lock holds for approval, or any of a server it does not pin (Refusal.Item)
	ApprovalRequired                  // a call that waits for `mcpsandbox approve ID` (Refusal.ApprovalID)
	ApprovalDenied                    // a call a person declined, or that no one approved in time
	SecretInArguments                 // a tools/call whose arguments carry a secret (Refusal.Path, never the value)
)

// Refusal is an answer the rules give instead of the server's.
type Refusal struct {
	Kind       Kind
	Message    string        // for the host, naming the setting
	Reason     string        // short, for data.reason
	Limit      string        // the limit that refused (RateLimited, TooManyCalls)
	RetryAfter time.Duration // when a call would be let through (RateLimited)
	Item       string        // the item held, as users name it, e.g. "tool:write_file" (Held)
	ApprovalID string        // the id `mcpsandbox approve` takes (ApprovalRequired)
	Expires    time.Time     // when that approval lapses (ApprovalRequired)
	Path       string        // where in the arguments, e.g. "arguments.config.token" (SecretInArguments)
	Secret     string        // which format, e.g. "github-token" (SecretInArguments)
	Approval   *Approval     // what the audit records (ApprovalRequired, ApprovalDenied)
}

// Options are what the rules are told besides the policy.
type Options struct {
	Setting field.Namer      // names settings in messages the user's way; nil: field.Plain
	Now     func() time.Time // the budget's clock; nil: time.Now
}

// New returns the policy's rules (p must be valid), or nil when it sets
// none (--no-secret-scan and nothing else): the relay then takes no step
// for them beyond a nil check.
func New(p policy.Policy, o Options) Rules {
	if o.Setting == nil {
		o.Setting = field.Plain
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &set{
		tools: p.ToolRule(), prompts: p.PromptRule(), resources: p.ResourceRule(),
		toolPrefix: p.ToolPrefix, callTimeout: p.CallTimeout,
		budget:  newBudget(p.RateLimits, p.MaxConcurrentCalls, o.Now),
		setting: o.Setting,
		secrets: secretScanner(p),
	}
	if !s.rewritesTools() && s.callTimeout <= 0 && !s.prompts.Active() && !s.resources.Active() && s.budget == nil && s.secrets == nil {
		return nil
	}
	return s
}

// set is the policy's rules.
type set struct {
	tools, prompts, resources policy.Rule
	toolPrefix                string
	callTimeout               time.Duration
	budget                    *budget // nil without --rate-limit and --max-concurrent-calls
	setting                   field.Namer
	secrets                   *secrets.Scanner // nil under --no-secret-scan
}

// call is what the rules keep of one host request.
type call struct {
	s       *set
	timeout time.Duration
	list    *listRule // its result is filtered
	slot    bool      // it holds one of --max-concurrent-calls
}

func (c *call) Timeout() time.Duration { return c.timeout }

func (c *call) Result(result []byte) ([]byte, *Refusal) {
	if c.list == nil {
		return nil, nil
	}
	return c.s.filter(result, c.list)
}

func (c *call) End() {
	if c.slot {
		c.s.budget.calls--
		c.slot = false
	}
}

// method classes: which rules apply to a method is said by naming it.
var (
	// listRules are the methods whose result a rule filters.
	listMethods = map[string]bool{"tools/list": true, "prompts/list": true, "resources/list": true, "resources/templates/list": true}
	// namingMethods name a prompt or a resource a rule may deny.
	namingMethods = map[string]bool{"prompts/get": true, "resources/read": true, "resources/subscribe": true, "completion/complete": true}
)

func (s *set) HostRequest(msg []byte, e *jsonrpc.Envelope) (Verdict, Call) {
	method := e.Method
	if e.MethodEscaped {
		method = []byte(e.MethodString())
	}
	switch m := string(method); {
	case m == "tools/call":
		return s.toolCall(e)
	case listMethods[m]:
		if lr := s.listRule(m); lr != nil {
			return Verdict{}, &call{s: s, list: lr}
		}
	case namingMethods[m]:
		if ref := s.requestDenial(m, e); ref != nil {
			return Verdict{Refusal: ref}, nil
		}
	}
	return Verdict{}, nil
}

func (s *set) ServerNotification(msg []byte, e *jsonrpc.Envelope) bool {
	if !s.resources.Active() || !e.MethodIs("notifications/resources/updated") {
		return true
	}
	return s.updateAllowed(e)
}
