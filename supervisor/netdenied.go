package supervisor

import (
	"fmt"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/egress"
)

// A server that needs a host its policy does not allow often fails in a
// way that says nothing: it never answers initialize, or its tool says
// "fetch failed". The egress proxy (mode egress) and the offline resolver
// (mode none) note every host the server was denied; the errors and the
// status mcpsandbox gives name them, with the --allow-host that allows
// each.

// denialMark numbers the denials so far, for deniedSince later.
func (r *relay) denialMark() uint64 {
	if r.egress == nil {
		return 0
	}
	return r.egress.Denials()
}

// deniedSince is what the server was denied after mark.
func (r *relay) deniedSince(mark uint64) egress.Denied {
	if r.egress == nil {
		return egress.Denied{}
	}
	return r.egress.Denied(mark)
}

// deniedText says, for an error message, which hosts the server tried that
// its policy does not allow and the flags that allow them; "" when none.
func (r *relay) deniedText(d egress.Denied) string {
	if len(d.Hosts) == 0 {
		return ""
	}
	hosts, fixes := make([]string, len(d.Hosts)), make([]string, len(d.Hosts))
	for i, h := range d.Hosts {
		hosts[i], fixes[i] = h.Host, h.Fix
	}
	more := ""
	if d.Others > 0 {
		more = fmt.Sprintf(" (and %d more attempts at other hosts)", d.Others)
	}
	it := "them"
	if len(hosts) == 1 {
		it = "it"
	}
	return fmt.Sprintf("the server tried to reach %s%s, which its policy does not allow (network mode %s); allow %s with %s",
		strings.Join(hosts, ", "), more, r.pol.Net, it, strings.Join(fixes, " "))
}

// deniedNames are the hosts of d, for an error's data.
func deniedNames(d egress.Denied) []string {
	var names []string
	for _, h := range d.Hosts {
		names = append(names, h.Host)
	}
	return names
}

// withDenied appends to message what the server was denied after mark,
// and puts the hosts in data; both unchanged when it was denied nothing.
func (r *relay) withDenied(message string, data errorData, mark uint64) (string, errorData) {
	d := r.deniedSince(mark)
	text := r.deniedText(d)
	if text == "" {
		return message, data
	}
	data.DeniedHosts = deniedNames(d)
	return message + ": " + text, data
}

// logDeniedBeforeError logs the hosts the server was denied while it
// handled req, which it answered with an error of its own ("fetch failed"
// to a tools/list): the error is the server's to word, the log says why.
// r.mu is held.
func (r *relay) logDeniedBeforeError(req hostRequest) {
	d := r.deniedSince(req.denials)
	if len(d.Hosts) == 0 || !r.logLimit.allow(r.log) {
		return
	}
	method := methodNames[req.method]
	if method == "" {
		method = "a request"
	}
	r.log.Warn("the server answered "+method+" with an error after it was denied hosts; "+r.deniedText(d), "denied_hosts", deniedNames(d))
}
