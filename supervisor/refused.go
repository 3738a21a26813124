package supervisor

import (
	"slices"
	"strings"
	"sync"

	"github.com/mcpsandbox/mcpsandbox/egress"
)

// maxRefusedHosts bounds the hosts a one-shot run notes: a hostile
// install script asking for thousands of names must not grow the
// supervisor's memory (the rest are counted).
const maxRefusedHosts = 16

// refusedHosts are the hosts the policy kept a server from, as the
// --allow-host values that would let it reach them, in the order first
// asked for: a name the DNS stub denied, a connection refused for want of
// an allow entry. A connection --deny-host refused is not one: no
// --allow-host lets it through.
type refusedHosts struct {
	mu    sync.Mutex
	hosts []string
	more  bool // hosts past maxRefusedHosts were asked for
}

func (r *refusedHosts) name(name string) { r.add(name) }

func (r *refusedHosts) conn(c *egress.Conn) {
	if c.Allowed {
		return
	}
	if spec, ok := strings.CutPrefix(c.Fix, "--allow-host "); ok {
		r.add(spec)
	}
}

func (r *refusedHosts) add(spec string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case slices.Contains(r.hosts, spec):
	case len(r.hosts) < maxRefusedHosts:
		r.hosts = append(r.hosts, spec)
	default:
		r.more = true
	}
}

func (r *refusedHosts) list() (hosts []string, more bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.hosts), r.more
}
