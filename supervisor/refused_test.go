package supervisor

import (
	"slices"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/egress"
)

// The hosts a one-shot run was kept from are named once each, first denied
// first, as the --allow-host values that allow them; --deny-host refusals
// are not among them, and hosts past the proxy's bound (egress keeps
// MaxDeniedHosts) are said to be more.
func TestRefusedHostsAreFewAndAllowable(t *testing.T) {
	d := egress.Denied{Hosts: []egress.DeniedHost{
		{Host: "storage.example.test", Fix: "--allow-host storage.example.test"},
		{Host: "db.example.test", Fix: "--allow-host db.example.test:5432"},
		{Host: "evil.example.test", Fix: "drop --deny-host evil.example.test"},
		{Host: "storage.example.test", Fix: "--allow-host storage.example.test"},
	}}
	if hosts, more := allowable(d); !slices.Equal(hosts, []string{"storage.example.test", "db.example.test:5432"}) || more {
		t.Errorf("refused %q (more %v)", hosts, more)
	}
	d.Others = 9984
	if _, more := allowable(d); !more {
		t.Errorf("with %d hosts past the bound: more false", d.Others)
	}
}
