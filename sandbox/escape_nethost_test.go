package sandbox

import (
	"strconv"
	"testing"
)

// escapeNetHostOpen are the rows host networking opens by design: the
// server shares the host's network namespace, its loopback and its
// interfaces, with inet sockets to use them.
var escapeNetHostOpen = map[string]string{
	"net_host_loopback_tcp": "the host's loopback is the server's",
	"net_namespace":         "the host's interfaces are the server's",
	"socket_inet":           "inet sockets are what host networking is for",
	// inet is allowed, so socketpair(AF_INET) reaches the kernel, which
	// refuses it (EOPNOTSUPP).
	"socketpair_other_families": "inet socket calls reach the kernel",
}

// escapeNetHostTable runs the escape table with host networking: every row
// but escapeNetHostOpen stays blocked. The host's abstract unix sockets are
// out of reach only through Landlock's scoping (ABI 6): below it the row
// is the documented limit, and reported as such.
func escapeNetHostTable(t *testing.T, hostile string) {
	c := newGrantedEscapeCanaries(t, hostile)
	spec := escapeSpec(hostile, []string{c.roDir, c.setIDDir}, []string{c.rwDir})
	spec.Net = NetHost
	report := escapeRun(t, spec, c.args)
	abi := hostLandlock().ABI
	for _, row := range escapeChecks {
		t.Run(row.class, func(t *testing.T) {
			r, ok := report[row.class]
			if !ok {
				t.Fatalf("the hostile server did not report %s", row.class)
			}
			why, open := escapeNetHostOpen[row.class]
			if row.class == "net_host_abstract_unix" && abi < landlockScopeABI {
				why, open = "Landlock ABI "+strconv.Itoa(abi)+" here: scoping abstract unix sockets needs ABI 6 (Linux 6.12+)", true
			}
			switch {
			case open && r.Blocked:
				t.Logf("blocked, though host networking opens it (%s): %s", why, r.Detail)
			case open:
				t.Logf("open under host networking (%s): %s", why, r.Detail)
			case !r.Blocked:
				t.Errorf("NOT BLOCKED: %s", r.Detail)
			default:
				t.Logf("blocked: %s", r.Detail)
			}
			if row.host != nil && !open {
				row.host(c, t)
			}
		})
	}
}
