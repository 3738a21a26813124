package egress

import (
	"net/netip"
	"slices"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// CaptureOf is what a Proxy of rules would capture (Proxy.Capture), for
// those who describe a server without running one (policy explain).
// A zero synthetic is DefaultSynthetic.
func CaptureOf(rules policy.HostRules, synthetic netip.Prefix) (ports []uint16, local []netip.Prefix) {
	if !synthetic.IsValid() {
		synthetic = DefaultSynthetic
	}
	local = []netip.Prefix{synthetic}
	for _, h := range rules.Allow {
		// A loopback address named lifts the SSRF floor for names that
		// resolve to it on the host, but inside it is the server's own
		// loopback, which is never captured.
		if h.IsAddr() && !h.Addrs.Addr().IsLoopback() && !slices.Contains(local, h.Addrs) {
			local = append(local, h.Addrs)
		}
	}
	return rules.Ports(), local
}
