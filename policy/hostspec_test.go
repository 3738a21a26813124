package policy

import (
	"net/netip"
	"slices"
	"testing"
)

func TestParseHostSpec(t *testing.T) {
	for _, c := range []struct {
		in    string
		name  string
		addrs string
		ports []uint16
	}{
		{"api.github.com", "api.github.com", "", DefaultPorts},
		{"API.GitHub.com.:8443", "api.github.com", "", []uint16{8443}},
		{"*.slack.com", "*.slack.com", "", DefaultPorts},
		{"*", "*", "", DefaultPorts},
		{"*:5432", "*", "", []uint16{5432}},
		{"192.0.2.7", "", "192.0.2.7/32", DefaultPorts},
		{"198.51.100.9/24:5432", "", "198.51.100.0/24", []uint16{5432}},
		{"2001:db8::1", "", "2001:db8::1/128", DefaultPorts},
		{"[2001:db8::/32]:443", "", "2001:db8::/32", []uint16{443}},
	} {
		h, err := ParseHostSpec(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		addrs := ""
		if h.IsAddr() {
			addrs = h.Addrs.String()
		}
		if h.Name != c.name || addrs != c.addrs || !slices.Equal(h.Ports, c.ports) {
			t.Errorf("%q = %+v, want name %q addrs %q ports %v", c.in, h, c.name, c.addrs, c.ports)
		}
	}
	for _, bad := range []string{"", "host:", ":443", "host:0", "host:70000", "a..b", "-a.com", "foo*.com", "a.*.com", "[2001:db8::1", "[::1]x", "ex ample.com"} {
		if h, err := ParseHostSpec(bad); err == nil {
			t.Errorf("%q parsed as %+v, want an error", bad, h)
		}
	}
}

func TestHostRulesDenyWins(t *testing.T) {
	r, err := ParseHostRules([]string{"*.example.test", "*.example.test:8443", "198.51.100.0/24:5432"}, []string{"secret.example.test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		port uint16
		want bool
	}{
		{"api.example.test", 443, true}, {"API.example.test.", 80, true}, {"api.example.test", 22, false},
		{"example.test", 443, false}, {"secret.example.test", 443, false}, {"evil.test", 443, false},
		{"secret.example.test", 8443, false}, // a deny entry without a port denies every port
	} {
		if got, _ := r.DecideName(c.name, c.port); got != c.want {
			t.Errorf("DecideName(%s, %d) = %v, want %v", c.name, c.port, got, c.want)
		}
	}
	if ok, by := r.DecideAddr(netip.MustParseAddr("198.51.100.20"), 5432); !ok || by.Text != "198.51.100.0/24:5432" {
		t.Errorf("DecideAddr in range = %v %v", ok, by)
	}
	if ok, _ := r.DecideAddr(netip.MustParseAddr("192.0.2.1"), 5432); ok {
		t.Error("an address no entry names was allowed")
	}
	if !r.NamesAddr(netip.MustParseAddr("198.51.100.1")) || r.NamesAddr(netip.MustParseAddr("127.0.0.1")) {
		t.Error("NamesAddr is wrong")
	}
	if got := r.Ports(); !slices.Equal(got, []uint16{80, 443, 5432, 8443}) {
		t.Errorf("Ports = %v", got)
	}
	if got := AllowFlag("db.example.test", 5432); got != "--allow-host db.example.test:5432" {
		t.Errorf("AllowFlag = %q", got)
	}
}
