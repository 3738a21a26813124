package audit

// Summary is a call's arguments as the audit line writes them (secret-looking
// keys and in-string secrets masked, extra naming more keys as AuditMask
// does), bounded to about max bytes: what a person is shown when asked to
// approve the call.
func Summary(arguments []byte, extra []string, max int) string {
	if len(arguments) == 0 {
		return "{}"
	}
	out, cut, ok := newMasker(extra, nil).maskJSON(arguments, max)
	switch {
	case !ok:
		return "(arguments that are not JSON)"
	case cut:
		return string(out) + " (cut)"
	}
	return string(out)
}
