package audit

import "github.com/mcpsandbox/mcpsandbox/secrets"

// Summary is a call's arguments as the audit line writes them (secret-looking
// keys masked, extra naming more keys as AuditMask does, and strings in
// which sc finds a secret: the policy's formats, nil the default ones),
// bounded to about max bytes: what a person is shown when asked to approve
// the call.
func Summary(arguments []byte, extra []string, sc *secrets.Scanner, max int) string {
	if len(arguments) == 0 {
		return "{}"
	}
	out, cut, ok := newMasker(extra, sc).maskJSON(arguments, max)
	switch {
	case !ok:
		return "(arguments that are not JSON)"
	case cut:
		return string(out) + " (cut)"
	}
	return string(out)
}
