package supervisor

import (
	"fmt"
	"slices"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/egress"
)

// The hosts a one-shot run was kept from are noted once each, first asked
// first, as the --allow-host values that allow them, and no more than
// maxRefusedHosts however many a hostile install asks for; allowed
// connections and --deny-host refusals are not among them.
func TestRefusedHostsAreFewAndAllowable(t *testing.T) {
	var r refusedHosts
	r.name("storage.example.test")
	r.conn(&egress.Conn{Allowed: false, Fix: "--allow-host db.example.test:5432"})
	r.conn(&egress.Conn{Allowed: true})
	r.conn(&egress.Conn{Allowed: false, Fix: "drop --deny-host evil.example.test"})
	r.name("storage.example.test")
	if hosts, more := r.list(); !slices.Equal(hosts, []string{"storage.example.test", "db.example.test:5432"}) || more {
		t.Errorf("refused %q (more %v)", hosts, more)
	}
	for i := range 10000 {
		r.name(fmt.Sprintf("h%d.example.test", i))
	}
	if hosts, more := r.list(); len(hosts) != maxRefusedHosts || !more {
		t.Errorf("after 10000 names: %d hosts kept (more %v), want %d and more", len(hosts), more, maxRefusedHosts)
	}
}
