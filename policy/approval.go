package policy

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// Annotation tiers of --approve-annotated: a tool whose annotations (MCP's
// defaults counting where a hint is absent) say so waits for approval.
const (
	ApproveDestructive = "destructive" // destructiveHint true and readOnlyHint false
	ApproveOpenWorld   = "open-world"  // openWorldHint true
)

// Modes for the server's own requests to the host.
const (
	ServerRequestAllow   = "allow"   // relayed to the host
	ServerRequestDeny    = "deny"    // answered with an error, never shown
	ServerRequestDecline = "decline" // answered as a user who said no
)

// SecretPattern is one more secret format of --secret-pattern NAME=REGEX.
type SecretPattern struct {
	Name string
	Re   *regexp.Regexp
}

// ParseSecretPattern reads NAME=REGEX (RE2 syntax).
func ParseSecretPattern(s string) (SecretPattern, error) {
	name, expr, ok := strings.Cut(s, "=")
	if !ok || name == "" || expr == "" {
		return SecretPattern{}, fmt.Errorf("want NAME=REGEX")
	}
	if !validEnvName(strings.ReplaceAll(name, "-", "_")) {
		return SecretPattern{}, fmt.Errorf("name %q holds a character other than letters, digits, - and _", name)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return SecretPattern{}, fmt.Errorf("regex: %v", err)
	}
	if re.MatchString("") {
		return SecretPattern{}, fmt.Errorf("regex %q matches the empty string, so every argument", expr)
	}
	return SecretPattern{Name: name, Re: re}, nil
}

// validateApproval checks the approval, secret and server-request fields.
func (p *Policy) validateApproval() error {
	bad := func(f, value, problem, fix string) error {
		return &field.Error{Field: f, Value: value, Problem: problem, Fix: fix}
	}
	for _, a := range p.ApproveAnnotated {
		if a != ApproveDestructive && a != ApproveOpenWorld {
			return bad("ApproveAnnotated", strconv.Quote(a), "is no annotation tier", "use destructive or open-world")
		}
	}
	for _, s := range p.SecretPatterns {
		if _, err := ParseSecretPattern(s); err != nil {
			return bad("SecretPatterns", strconv.Quote(s), "is no secret pattern: "+err.Error(), `e.g. acme-key=acme_[A-Za-z0-9]{32}`)
		}
	}
	for _, m := range []struct{ field, mode string }{
		{"ServerElicitation", p.ServerElicitation}, {"ServerSampling", p.ServerSampling}, {"ServerRoots", p.ServerRoots},
	} {
		switch m.mode {
		case ServerRequestAllow, ServerRequestDeny, ServerRequestDecline:
		default:
			return bad(m.field, strconv.Quote(m.mode), "is no mode", "use allow (relay it to the host), deny (answer an error) or decline (answer as a user who said no)")
		}
	}
	if p.ServerRequestLimit != "" {
		rl, err := ParseRateLimit(p.ServerRequestLimit)
		if err == nil && rl.Glob != "" {
			err = fmt.Errorf("takes no GLOB=")
		}
		if err != nil {
			return bad("ServerRequestLimit", strconv.Quote(p.ServerRequestLimit), "is no rate limit: "+err.Error(), `e.g. 30/1m, or "" for none`)
		}
	}
	return nil
}
