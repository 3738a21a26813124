package mcprules

import (
	"fmt"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/secrets"
)

// The secret rule refuses a tools/call whose params carry what looks like
// a secret: the leak confinement cannot see, a key the agent read through
// another tool and hands this server as an argument. _meta is the host's,
// not the agent's, and is not looked into.

// SecretScanner is the scanner of the policy's formats (the default ones
// and SecretPatterns), whatever NoSecretScan says: the audit log masks
// what it finds even where the rule is off.
func SecretScanner(p policy.Policy) *secrets.Scanner {
	var extra []secrets.Pattern
	for _, s := range p.SecretPatterns {
		sp, err := policy.ParseSecretPattern(s) // p is valid
		if err != nil {
			continue
		}
		extra = append(extra, secrets.Pattern{Name: sp.Name, Re: sp.Re})
	}
	return secrets.New(extra...)
}

// secretScanner is the rule's scanner, nil under --no-secret-scan.
func secretScanner(p policy.Policy) *secrets.Scanner {
	if p.NoSecretScan {
		return nil
	}
	return SecretScanner(p)
}

// secretRefusal refuses e's tools/call when its params hold a secret.
func (s *set) secretRefusal(e *jsonrpc.Envelope) *Refusal {
	if len(e.Params) == 0 {
		return nil // nothing to carry one; the server answers the call
	}
	found, err := s.secrets.Scan(e.Params, "_meta")
	if err != nil {
		return deny("tools/call params could not be read to look for secrets in its arguments; it was not relayed").Refusal
	}
	if len(found) == 0 {
		return nil
	}
	f := found[0]
	var where string
	switch at := f.Path; {
	case at == "" && f.InName:
		where = "the params have a member whose name is"
	case at == "":
		where = "the params hold"
	case f.InName:
		where = at + " has a member whose name is"
	default:
		where = at + " holds"
	}
	more := ""
	if len(found) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(found)-1)
	}
	tool := "a tool"
	if params, ok := members(e.Params); ok {
		if name, ok := nameOf(params); ok {
			tool = fmt.Sprintf("%q", name)
		}
	}
	return &Refusal{Kind: SecretInArguments, Reason: "secret in arguments", Path: f.Path, Secret: f.Secret,
		Message: fmt.Sprintf("tools/call %s refused: %s what looks like %s (%s)%s; mcpsandbox never passes secrets to a server: "+
			"take it out of the arguments, or, if this server is meant to get it, allow it with %s",
			tool, where, f.What, f.Secret, more, s.setting("NoSecretScan"))}
}
