package sandbox

import (
	"os"
	"strings"
	"testing"

	"github.com/containerd/cgroups/v3"
)

// resolverProbes are what a server under NetNone with the supervisor's
// resolver tries, and what it must see: the resolver answers on UDP, and
// nothing else is reachable or even a socket it may make.
var resolverProbes = map[string]string{
	"udp 127.0.0.1:53":    "answered dns:probe",
	"udp 192.0.2.1:53":    "permission denied", // the prohibit route: lo is all there is
	"udp 203.0.113.5:123": "permission denied",
	"tcp 127.0.0.1:53":    "operation not permitted", // no TCP socket at all
	"tcp 192.0.2.1:443":   "operation not permitted",
	"loopback":            "listen: operation not permitted",
}

// resolverSpec runs the probe confined under NetNone with the resolver
// served by e.
func resolverSpec(e *egressEcho) Spec {
	spec := sbxSpec(os.Args[0])
	spec.Env = []string{sbxEgressEnv + "=" + probeList(resolverProbes)}
	spec.Resolver = e.serve
	return spec
}

// The pre-forked init stage hands over the resolver's sockets as the
// exec'd one does.
func TestConfinedNoneResolverPreforkedInitStage(t *testing.T) {
	requireConfinement(t)
	if cgroups.Mode() == cgroups.Unified {
		t.Skip("no init stage is pre-forked on cgroup v2: it must start inside its cgroup (CLONE_INTO_CGROUP)")
	}
	checkProbes(t, preforkedProbe(t, "resolver"), resolverProbes)
}

// NetNone with a Resolver: the server's resolv.conf names 127.0.0.1, its
// queries reach the listener the supervisor was handed, and it gets UDP
// sockets only, to no address but its own loopback.
func TestConfinedNoneResolverAnswersAndNothingElse(t *testing.T) {
	requireConfinement(t)
	e := &egressEcho{}
	defer e.close()
	spec := resolverSpec(e)
	out, errOut, ex := sbxRun(t, spec)
	if ex.Failed() {
		t.Fatalf("probe: %v\nstderr:\n%s", ex, errOut)
	}
	checkProbes(t, out, resolverProbes)
	if len(e.served) != 1 || len(e.served[0].TCP) != 0 {
		t.Errorf("Resolver was served %d times (want 1), with TCP listeners %v (want none)", len(e.served), e.served)
	}

	spec.Env = nil
	if resolv := sbxShell(t, spec, "cat /etc/resolv.conf"); strings.TrimSpace(resolv) != "nameserver 127.0.0.1" {
		t.Errorf("resolv.conf: %q, want the resolver alone", resolv)
	}
	spec.Resolver = nil
	if resolv := sbxShell(t, spec, "cat /etc/resolv.conf 2>&1 || true"); !strings.Contains(resolv, "No such file") {
		t.Errorf("without a Resolver, resolv.conf: %q, want none", resolv)
	}
}

// A Resolver is for NetNone alone.
func TestResolverOnlyWithNetNone(t *testing.T) {
	spec := sbxSpec("/bin/true")
	spec.Resolver = func(Listeners) error { return nil }
	for _, n := range []Network{NetHost, NetEgress} {
		spec.Net = n
		if _, _, err := captureSockets(spec); err == nil || !strings.Contains(err.Error(), "Resolver") {
			t.Errorf("%s: %v, want an error naming Resolver", n, err)
		}
	}
}
