package serverreq

import (
	"encoding/json"
	"fmt"
	"time"

	"golang.org/x/time/rate"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor/audit"
)

// The kinds of request the policy names.
const (
	Elicit  = "elicitation/create"
	Sample  = "sampling/createMessage"
	Roots   = "roots/list"
	pingReq = "ping"
)

// Outcome says what became of a server request: its audit line's outcome.
type Outcome string

const (
	Relayed       Outcome = "relayed"         // it went on to the host
	Denied        Outcome = "denied"          // the policy denies its kind: the server got an error
	Declined      Outcome = "declined"        // answered as a user who said no; the host never saw it
	RateLimited   Outcome = "rate-limited"    // over --server-request-limit
	URLNotAllowed Outcome = "url-not-allowed" // a URL-mode elicitation to a host not on --allow-host
)

// Via says how the request came: its audit line's "via".
const (
	ViaRequest       = "request"        // a JSON-RPC request of the server's (classic sessions)
	ViaInputRequired = "input-required" // an input request of a 2026-07-28 result
)

// Verdict is what becomes of one server request.
type Verdict struct {
	Method  string
	Mode    string  // the policy's mode for its kind: allow, deny, decline
	Outcome Outcome // Relayed: relay it (with Params when not nil)
	// Reason says why it was not relayed, naming the setting.
	Reason string
	// Params, when not nil, replace the request's params (an elicitation
	// marked as the server's words).
	Params json.RawMessage
	// Marked says the request claimed to be mcpsandbox's and was marked.
	Marked bool
	// Quiet says the log has said already that the limit refuses (a
	// flood is logged once, not once a request).
	Quiet bool
	// Decline is what a user who said no answers (Outcome Declined): a
	// result, or for sampling nil, which is answered with DeclineError.
	Decline json.RawMessage
	url     string
}

// Refused reports whether the server gets an error (Denied, RateLimited,
// URLNotAllowed).
func (v *Verdict) Refused() bool {
	return v.Outcome != Relayed && v.Outcome != Declined
}

// DeclineCode and DeclineMessage answer a declined sampling/createMessage
// as MCP has a client answer a user's rejection of one.
const (
	DeclineCode    = -1
	DeclineMessage = "declined"
)

// Options are what a Gate is told besides the policy.
type Options struct {
	Setting field.Namer      // names settings the user's way; nil: field.Plain
	Audit   *audit.Log       // nil: no audit log
	Now     func() time.Time // nil: time.Now
}

// Gate decides the server's requests of one relay. Its caller serialises
// the calls (the relay's lock): it has no lock of its own.
type Gate struct {
	modes   map[string]string
	limit   *rate.Limiter // nil: no --server-request-limit
	limitOf string        // the limit as the policy wrote it
	urls    urlHosts
	setting field.Namer
	audit   *audit.Log
	now     func() time.Time
	// Lines of requests that never reached the host are held to a bucket
	// of their own, so a server flooding refused requests cannot grow the
	// audit log without bound; suppressed counts those left out, told in
	// the next line written.
	auditLim   *rate.Limiter
	suppressed int
	overLimit  bool // the last request decided was over the rate limit
}

// Lines of requests not relayed: a burst of auditBurst, then one a second.
const auditBurst = 60

// New returns the policy's gate (p must be valid).
func New(p policy.Policy, o Options) *Gate {
	if o.Setting == nil {
		o.Setting = field.Plain
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	g := &Gate{
		modes:    map[string]string{Elicit: p.ServerElicitation, Sample: p.ServerSampling, Roots: p.ServerRoots},
		setting:  o.Setting,
		audit:    o.Audit,
		now:      o.Now,
		auditLim: rate.NewLimiter(rate.Every(time.Second), auditBurst),
	}
	if rl, err := policy.ParseRateLimit(p.ServerRequestLimit); p.ServerRequestLimit != "" && err == nil {
		g.limit = rate.NewLimiter(rate.Every(rl.Per/time.Duration(rl.N)), rl.N)
		g.limitOf = rl.String()
	}
	g.urls.offline = p.Net == policy.NetNone
	g.urls.rules, _ = policy.ParseHostRules(p.AllowHosts, p.DenyHosts) // Validate has checked them
	return g
}

// Decide says what becomes of a request of method with params (raw JSON;
// nil: none). It takes a token of the rate limit when it relays, and
// writes no audit line: Record does, once the caller knows the end.
func (g *Gate) Decide(method string, params json.RawMessage) Verdict {
	v := Verdict{Method: method, Mode: policy.ServerRequestAllow, Outcome: Relayed}
	if method == pingReq {
		return v // a liveness check the host answers itself: no person, no model
	}
	if m, ok := g.modes[method]; ok && m != "" {
		v.Mode = m
	}
	switch v.Mode {
	case policy.ServerRequestDeny:
		v.Outcome = Denied
		v.Reason = fmt.Sprintf("%s is denied by mcpsandbox's %s deny", method, g.setting(settingOf[method]))
		return v
	case policy.ServerRequestDecline:
		v.Outcome = Declined
		v.Decline = declineAnswer[method]
		return v
	}
	if method == Elicit {
		var p struct {
			Mode string
			URL  string
		}
		json.Unmarshal(params, &p)
		if p.Mode == "url" || p.URL != "" {
			v.url = p.URL
			if why := g.urls.check(p.URL, g.setting); why != "" {
				v.Outcome, v.Reason = URLNotAllowed, "URL-mode elicitation refused: "+why
				return v
			}
		}
		v.Params, v.Marked = markSpoof(params)
	}
	if g.limit != nil && !g.limit.AllowN(g.now(), 1) {
		v.Outcome, v.Quiet = RateLimited, g.overLimit
		v.Reason = fmt.Sprintf("the server may send the host %s requests under mcpsandbox's %s", g.limitOf, g.setting("ServerRequestLimit"))
	}
	g.overLimit = v.Outcome == RateLimited
	return v
}

var settingOf = map[string]string{Elicit: "ServerElicitation", Sample: "ServerSampling", Roots: "ServerRoots"}

var declineAnswer = map[string]json.RawMessage{
	Elicit: json.RawMessage(`{"action":"decline"}`),
	Roots:  json.RawMessage(`{"roots":[]}`),
}

// Record writes v's audit line (via: ViaRequest or ViaInputRequired).
func (g *Gate) Record(v *Verdict, via string) {
	if g.audit == nil || v.Method == pingReq {
		return
	}
	if v.Outcome != Relayed && !g.auditLim.AllowN(g.now(), 1) {
		g.suppressed++
		return
	}
	g.audit.ServerRequest(audit.ServerRequest{
		Method: v.Method, Via: via, Mode: v.Mode, Outcome: string(v.Outcome),
		Reason: v.Reason, URL: v.url, Marked: v.Marked, Suppressed: g.suppressed,
	})
	g.suppressed = 0
}
