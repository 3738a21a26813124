package policy

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// allow-hosts selects egress where no mode is said beside them, over a
// base that says host (the file narrows it); a later mode alone sets the
// mode and keeps the list, out of force. Each entry keeps where it is.
func TestAllowHostsSelectEgressLevelByLevel(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"host.yaml":   "network:\n  mode: host\n",
		"narrow.yaml": "extends: host.yaml\nnetwork:\n  allow-hosts:\n    - api.example.test\n    - \"*.example.test:8443\"\n  deny-hosts: [bad.example.test]\n",
		"wide.yaml":   "extends: narrow.yaml\nnetwork:\n  mode: none\n",
		"more.yaml":   "extends: narrow.yaml\nnetwork:\n  allow-hosts: [198.51.100.0/24:5432]\n",
	})
	p, origin, err := load(t, dir, "narrow.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p.Net != NetEgress || !slices.Equal(p.AllowHosts, []string{"api.example.test", "*.example.test:8443"}) || !slices.Equal(p.DenyHosts, []string{"bad.example.test"}) {
		t.Fatalf("narrow.yaml: net %s allow %q deny %q; want egress with its lists", p.Net, p.AllowHosts, p.DenyHosts)
	}
	narrow := filepath.Join(dir, "narrow.yaml")
	if got := origin["Net"]; got != (Pos{narrow, 3, 3}) {
		t.Errorf("egress is from %v, want narrow.yaml's allow-hosts at 3:3", got)
	}
	for i, want := range []Pos{{narrow, 4, 7}, {narrow, 5, 7}} {
		if got, ok := origin.Item("AllowHosts", i); !ok || got != want {
			t.Errorf("allow-hosts item %d at %v, want %v", i, got, want)
		}
	}
	p.Command = []string{"server"}
	if err := origin.Validate(&p); err != nil {
		t.Errorf("narrow.yaml is not valid: %v", err)
	}

	p, _, err = load(t, dir, "wide.yaml")
	if err != nil || p.Net != NetNone || len(p.AllowHosts) != 2 {
		t.Errorf("wide.yaml: net %s allow %q (%v); want none, the list kept", p.Net, p.AllowHosts, err)
	}
	p, origin, err = load(t, dir, "more.yaml")
	if err != nil || p.Net != NetEgress || len(p.AllowHosts) != 3 {
		t.Fatalf("more.yaml: net %s allow %q (%v); want egress with three entries", p.Net, p.AllowHosts, err)
	}
	if got, _ := origin.Item("AllowHosts", 2); got != (Pos{filepath.Join(dir, "more.yaml"), 3, 17}) {
		t.Errorf("the entry more.yaml adds is placed at %v", got)
	}
	if got, _ := origin.Item("AllowHosts", 0); got.File != narrow {
		t.Errorf("the entry narrow.yaml gave is placed in %s", got.File)
	}
}

// The caller's level (run's flags): --allow-host over a mode a file set
// selects egress; --net with --allow-host on the same level is a
// contradiction named in flags.
func TestSelectNetOnTheCommandLine(t *testing.T) {
	p := Default()
	p.Net = NetHost // a built-in's
	p.AllowHosts = []string{"api.example.test"}
	if selected, err := p.SelectNet(false, true); err != nil || !selected || p.Net != NetEgress {
		t.Errorf("--allow-host over host: selected %v, net %s, %v; want egress", selected, p.Net, err)
	}
	p.Net = NetHost
	_, err := p.SelectNet(true, true)
	var fe *field.Error
	if !errors.As(err, &fe) {
		t.Fatalf("--net host --allow-host: %v, want a field error", err)
	}
	want := "--net host: contradicts --allow-host, which selects network mode egress (only the hosts it names): drop --net to reach only those hosts, or drop --allow-host for the host's whole network"
	if got := fe.Render(FlagOf); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	p.Net = NetEgress
	if _, err := p.SelectNet(true, true); err != nil {
		t.Errorf("--net egress --allow-host: %v", err)
	}
	p.Net = NetNone
	if selected, err := p.SelectNet(true, false); err != nil || selected || p.Net != NetNone {
		t.Errorf("--net none alone: selected %v, net %s, %v", selected, p.Net, err)
	}
}

func TestNetworkValidationNamesTheFix(t *testing.T) {
	for _, c := range []struct {
		set  func(p *Policy)
		want string
	}{
		{func(p *Policy) { p.Net = NetEgress }, "--net egress: with no --allow-host reaches nothing: name the hosts the server needs with --allow-host (which selects egress by itself), or use --net none"},
		{func(p *Policy) { p.Net, p.AllowHosts = NetEgress, []string{"api.example.test:"} }, `--allow-host "api.example.test:": is no host: has : but no port after it: ` + HostSpecForms},
		{func(p *Policy) { p.DenyHosts = []string{"evil.example.test"} }, `--deny-host "evil.example.test": only narrows what --allow-host allows`},
		{func(p *Policy) { p.Net, p.DenyHosts = NetHost, []string{"evil.example.test"} }, "is not in force under --net host, which reaches every host"},
		{func(p *Policy) { p.Net, p.AllowHosts, p.Resolver = NetEgress, []string{"*"}, "[2001:db8::53" }, `--resolver "[2001:db8::53": is no address`},
	} {
		p := Default()
		p.Command = []string{"server"}
		c.set(&p)
		err := p.Validate()
		var fe *field.Error
		if !errors.As(err, &fe) || !strings.Contains(fe.Render(FlagOf), c.want) {
			t.Errorf("got %v\nwant %s", err, c.want)
		}
	}
	p := Default()
	p.Command, p.Net, p.AllowHosts, p.DenyHosts = []string{"server"}, NetEgress, []string{"*"}, []string{"192.0.2.0/24"}
	if err := p.Validate(); err != nil {
		t.Errorf("any public host but a range: %v", err)
	}
}

func TestResolverAddress(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.53": "192.0.2.53:53", "192.0.2.53:5353": "192.0.2.53:5353", "2001:db8::53": "[2001:db8::53]:53",
		"[2001:db8::53]:5353": "[2001:db8::53]:5353", "DNS.example.test:53": "dns.example.test:53", "dns.example.test": "dns.example.test:53",
	} {
		if got, err := ResolverAddress(in); err != nil || got != want {
			t.Errorf("ResolverAddress(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"192.0.2.53:0", "192.0.2.53:99999", "dns example", "[2001:db8::53", "fe80::1%eth0", ":53"} {
		if got, err := ResolverAddress(bad); err == nil {
			t.Errorf("ResolverAddress(%q) = %q, want an error", bad, got)
		}
	}
}

func TestURLHosts(t *testing.T) {
	for _, c := range []struct {
		arg   string
		specs []string
		url   bool
	}{
		{"postgresql://app:secret@db.example.test/shop", []string{"db.example.test:5432"}, true},
		{"postgres://db.example.test:6543/shop?sslmode=require", []string{"db.example.test:6543"}, true},
		{"postgresql://a.example.test,b.example.test:5433/shop", []string{"a.example.test:5432", "b.example.test:5433"}, true},
		{"postgresql://localhost/none", []string{"127.0.0.1:5432", "[::1]:5432"}, true},
		{"postgresql://[2001:db8::7]:5432/x", []string{"[2001:db8::7]:5432"}, true},
		{"postgresql://192.0.2.7/x", []string{"192.0.2.7:5432"}, true},
		{"https://api.example.test/v1", []string{"api.example.test:443"}, true},
		{"postgresql:///shop?host=/var/run/postgresql", nil, true},
		{"postgresql://%2Fvar%2Frun%2Fpostgresql/shop", nil, true},
		{"file:///srv/data", nil, true},
		{"/srv/data", nil, false},
		{"--verbose", nil, false},
		{"@scope/pkg", nil, false},
	} {
		specs, url, err := URLHosts(c.arg)
		if err != nil || url != c.url || !slices.Equal(specs, c.specs) {
			t.Errorf("URLHosts(%q) = %q, %v, %v; want %q, %v", c.arg, specs, url, err, c.specs, c.url)
		}
	}
	_, _, err := URLHosts("gopher://u:hunter2@h.example.test/")
	if err == nil || !strings.Contains(err.Error(), "gopher:// has none known: write its port") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("an unknown scheme without a port: %v; want the fix, without the password", err)
	}
}

// ${ARG_HOSTS} gives the hosts of the server's own URL arguments; where
// the arguments are unknown (policy check) an egress policy relying on it
// is valid; where they hold no URL the error is at the item.
func TestArgHosts(t *testing.T) {
	dir := writeFiles(t, map[string]string{"db.yaml": "network:\n  allow-hosts: [\"${ARG_HOSTS}\"]\n"})
	file := filepath.Join(dir, "db.yaml")
	loadWith := func(v Vars) (Policy, Origin, error) {
		p, o, err := Loader{Vars: v}.Load(file)
		p.Command = []string{"server"}
		if err == nil {
			err = o.Validate(&p)
		}
		return p, o, err
	}
	p, o, err := loadWith(Vars{Args: []string{"-y", "pkg", "postgresql://db.example.test/shop"}, ServerArgs: []string{"postgresql://db.example.test/shop"}})
	if err != nil || p.Net != NetEgress || !slices.Equal(p.AllowHosts, []string{"db.example.test:5432"}) {
		t.Errorf("with a URL: net %s allow %q (%v)", p.Net, p.AllowHosts, err)
	}
	if at, _ := o.Item("AllowHosts", 0); at != (Pos{file, 2, 17}) {
		t.Errorf("the URL's host is placed at %v", at)
	}
	if p, _, err := loadWith(Vars{NoArgs: true}); err != nil || p.Net != NetEgress || len(p.AllowHosts) != 0 {
		t.Errorf("arguments unknown: net %s allow %q (%v); want egress, valid", p.Net, p.AllowHosts, err)
	}
	_, _, err = loadWith(Vars{Args: []string{"pkg"}})
	if err == nil || !strings.HasPrefix(err.Error(), file+":2:17: ") || !strings.Contains(err.Error(), "${ARG_HOSTS} found no URL among the server's arguments") || !strings.Contains(err.Error(), "postgresql://db.example.test/mydb") {
		t.Errorf("no URL: %v", err)
	}
	_, _, err = loadWith(Vars{ServerArgs: []string{"gopher://h.example.test"}})
	if err == nil || !strings.Contains(err.Error(), "write its port") {
		t.Errorf("a URL without a known port: %v", err)
	}
	bad := writeFiles(t, map[string]string{"p.yaml": "filesystem:\n  ro: [\"${ARG_HOSTS}\"]\n"})
	if _, _, err := (Loader{}).Load(filepath.Join(bad, "p.yaml")); err == nil || !strings.Contains(err.Error(), "use it as an item of its own of network.allow-hosts") {
		t.Errorf("${ARG_HOSTS} in a path: %v", err)
	}
}
