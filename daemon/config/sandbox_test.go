package config

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Each VS Code sandbox setting lands in the policy field that says it.
func TestSandboxMapping(t *testing.T) {
	t.Setenv("HOME", "/home/ann")
	for _, tc := range []struct {
		name    string
		sandbox string // the entry's sandbox object
		over    policy.Policy
		given   []string
		lim     Limits // without At, Writable and Reachable's VS Code defaults
	}{
		{"allowWrite: a read-write grant", `{"filesystem": {"allowWrite": ["/srv/out", "~/cache", "rel"]}}`,
			policy.Policy{ReadWrite: []string{"/srv/out", "/home/ann/cache", "/work/rel"}}, []string{"ReadWrite"},
			Limits{Writable: []Item{{Value: "/srv/out"}, {Value: "/home/ann/cache"}, {Value: "/work/rel"}}}},
		{"denyWrite within allowWrite: a read-only grant over it", `{"filesystem": {"allowWrite": ["/"], "denyWrite": ["/etc"]}}`,
			policy.Policy{ReadOnly: []string{"/etc"}, ReadWrite: []string{"/"}}, []string{"ReadOnly", "ReadWrite"},
			Limits{Writable: []Item{{Value: "/"}}, DenyWrite: []Item{{Value: "/etc"}}}},
		{"denyWrite of allowWrite itself: read-only", `{"filesystem": {"allowWrite": ["/etc"], "denyWrite": ["/etc"]}}`,
			policy.Policy{ReadOnly: []string{"/etc"}}, []string{"ReadOnly", "ReadWrite"},
			Limits{Writable: []Item{{Value: "/etc"}}, DenyWrite: []Item{{Value: "/etc"}}}},
		{"denyWrite elsewhere: kept for Narrow", `{"filesystem": {"denyWrite": ["/srv/keep"]}}`,
			policy.Policy{}, nil, Limits{DenyWrite: []Item{{Value: "/srv/keep"}}}},
		{"denyRead: kept for Narrow", `{"filesystem": {"denyRead": ["~/.ssh", "/etc/shadow"]}}`,
			policy.Policy{}, nil, Limits{DenyRead: []Item{{Value: "/home/ann/.ssh"}, {Value: "/etc/shadow"}}}},
		{"allowedDomains: allow-hosts", `{"network": {"allowedDomains": ["api.example.com", "*.cdn.example.com", "198.51.100.7:5432"]}}`,
			policy.Policy{AllowHosts: []string{"api.example.com", "*.cdn.example.com", "198.51.100.7:5432"}}, []string{"AllowHosts"},
			Limits{Reachable: []Item{{Value: "api.example.com"}, {Value: "*.cdn.example.com"}, {Value: "198.51.100.7:5432"}}}},
		{"deniedDomains: deny-hosts", `{"network": {"allowedDomains": ["*.example.com"], "deniedDomains": ["evil.example.com"]}}`,
			policy.Policy{AllowHosts: []string{"*.example.com"}, DenyHosts: []string{"evil.example.com"}}, []string{"AllowHosts", "DenyHosts"},
			Limits{Reachable: []Item{{Value: "*.example.com"}}}},
		{"empty lists: nothing given, still sandboxed", `{"filesystem": {"allowWrite": []}, "network": {"allowedDomains": null}}`,
			policy.Policy{}, nil, Limits{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := parseOne(t, `{"servers": {"s": {"command": "x", "cwd": "/work", "sandboxEnabled": true, "sandbox": `+tc.sandbox+`}}}`)
			s := only(t, c)
			if !reflect.DeepEqual(s.Overrides, tc.over) || !slices.Equal(s.Given, tc.given) {
				t.Errorf("overrides %+v given %q,\nwant %+v given %q", s.Overrides, s.Given, tc.over, tc.given)
			}
			lim := s.Limits
			if !lim.Sandboxed || lim.At.Line != 1 {
				t.Errorf("sandboxed %v at %v", lim.Sandboxed, lim.At)
			}
			// VS Code's own defaults close the allow lists.
			tc.lim.Writable = append(tc.lim.Writable, Item{Value: "/home/ann/.npm"}, Item{Value: "/work"})
			tc.lim.Reachable = append(tc.lim.Reachable, Item{Value: "registry.npmjs.org"})
			for _, l := range []*[]Item{&lim.Writable, &lim.Reachable, &lim.DenyRead, &lim.DenyWrite} {
				for i := range *l {
					(*l)[i].Pos = policy.Pos{}
				}
			}
			lim.Sandboxed, lim.At = false, policy.Pos{}
			if !reflect.DeepEqual(lim, tc.lim) {
				t.Errorf("limits %+v,\nwant %+v", lim, tc.lim)
			}
		})
	}
}

// The file's own sandbox (VS Code's mcp.json keeps one at its top) holds
// for each sandboxed server of it, and an entry's adds to it.
func TestRootSandbox(t *testing.T) {
	c, _ := parseOne(t, `{
  "sandbox": {"network": {"allowedDomains": ["a.example.test"]}},
  "servers": {
    "on": {"command": "x", "sandboxEnabled": true, "sandbox": {"network": {"allowedDomains": ["b.example.test"]}}},
    "off": {"command": "y"}
  }
}`)
	on, _ := c.Server("on")
	off, _ := c.Server("off")
	if !slices.Equal(on.Overrides.AllowHosts, []string{"a.example.test", "b.example.test"}) || !on.Limits.Sandboxed {
		t.Errorf("on: hosts %q", on.Overrides.AllowHosts)
	}
	if len(off.Given) != 0 || off.Limits.Sandboxed {
		t.Errorf("off: given %q sandboxed %v; the file's sandbox is for sandboxed servers", off.Given, off.Limits.Sandboxed)
	}
}

// Narrow takes back from a resolved policy what the entry refuses.
func TestNarrow(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "proj", "keep")
	if err := os.MkdirAll(keep, 0o755); err != nil {
		t.Fatal(err)
	}
	proj := filepath.Dir(keep)
	valid := func(p policy.Policy) policy.Policy {
		base := policy.Default()
		base.Command = []string{"srv"}
		base.ReadOnly, base.ReadWrite, base.Net, base.AllowHosts, base.DenyHosts, base.Env = p.ReadOnly, p.ReadWrite, p.Net, p.AllowHosts, p.DenyHosts, p.Env
		if base.Net == "" {
			base.Net = policy.NetNone
		}
		return base
	}
	for _, tc := range []struct {
		name     string
		entry    string // the entry's keys after "command"
		resolved policy.Policy
		want     policy.Policy
	}{
		{"a writable grant outside allowWrite becomes read-only", `"sandboxEnabled": true, "cwd": "/work", "sandbox": {"filesystem": {"allowWrite": ["` + proj + `"]}}`,
			valid(policy.Policy{ReadWrite: []string{proj, "/srv/data", "/work/out"}}),
			valid(policy.Policy{ReadOnly: []string{"/srv/data"}, ReadWrite: []string{proj, "/work/out"}})},
		{"a grant within a denyWrite becomes read-only; one holding it gets one over it", `"sandboxEnabled": true, "sandbox": {"filesystem": {"allowWrite": ["` + proj + `"], "denyWrite": ["` + keep + `"]}}`,
			valid(policy.Policy{ReadWrite: []string{keep + "/b", proj}}),
			valid(policy.Policy{ReadOnly: []string{keep + "/b", keep}, ReadWrite: []string{proj}})},
		{"env null takes the variable away", `"env": {"X": null}`,
			valid(policy.Policy{ReadWrite: []string{"/srv"}, Env: []string{"X=1", "Y", "X"}}),
			valid(policy.Policy{ReadWrite: []string{"/srv"}, Env: []string{"Y"}})},
		{"hosts outside allowedDomains are dropped", `"sandboxEnabled": true, "sandbox": {"network": {"allowedDomains": ["*.github.com", "api.example.com:8443"]}}`,
			valid(policy.Policy{Net: policy.NetEgress, AllowHosts: []string{"api.github.com:443", "raw.githubusercontent.com:443", "*.api.github.com", "api.example.com", "api.example.com:8443"}, DenyHosts: []string{"x.github.com"}}),
			valid(policy.Policy{Net: policy.NetEgress, AllowHosts: []string{"api.github.com:443", "*.api.github.com", "api.example.com:8443"}, DenyHosts: []string{"x.github.com"}})},
		{"no host left: no network", `"sandboxEnabled": true`,
			valid(policy.Policy{Net: policy.NetEgress, AllowHosts: []string{"api.github.com:443"}, DenyHosts: []string{"x.github.com"}}),
			valid(policy.Policy{Net: policy.NetNone})},
		{"VS Code's npm registry stays", `"sandboxEnabled": true`,
			valid(policy.Policy{Net: policy.NetEgress, AllowHosts: []string{"registry.npmjs.org:443"}}),
			valid(policy.Policy{Net: policy.NetEgress, AllowHosts: []string{"registry.npmjs.org:443"}})},
		{"the whole network becomes no network", `"sandboxEnabled": true`,
			valid(policy.Policy{Net: policy.NetHost}),
			valid(policy.Policy{Net: policy.NetNone})},
		{"no network stays so", `"sandboxEnabled": true, "sandbox": {"network": {"allowedDomains": ["a.example.test"]}}`,
			valid(policy.Policy{}),
			valid(policy.Policy{})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := parseOne(t, `{"servers": {"s": {"command": "srv", `+tc.entry+`}}}`)
			s := only(t, c)
			p := tc.resolved
			if err := s.Narrow(&p); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p, tc.want) {
				t.Errorf("narrowed to ro %q rw %q net %s allow %q deny %q env %q,\nwant ro %q rw %q net %s allow %q deny %q env %q",
					p.ReadOnly, p.ReadWrite, p.Net, p.AllowHosts, p.DenyHosts, p.Env,
					tc.want.ReadOnly, tc.want.ReadWrite, tc.want.Net, tc.want.AllowHosts, tc.want.DenyHosts, tc.want.Env)
			}
		})
	}
}

// What cannot be narrowed is refused where the entry says it.
func TestNarrowRefuses(t *testing.T) {
	t.Setenv("HOME", "/home/ann")
	c, dir := parseOne(t, `{"servers": {
  "read": {"command": "srv", "sandboxEnabled": true, "sandbox": {"filesystem": {"denyRead": ["~/.ssh"]}}},
  "free": {"command": "srv", "env": {"X": null}}
}}`)
	read, _ := c.Server("read")
	p := policy.Default()
	p.Command, p.ReadOnly = []string{"srv"}, []string{"/home/ann"}
	err := read.Narrow(&p)
	if want := filepath.Join(dir, "cfg.json") + ":2:94: sandbox.filesystem.denyRead /home/ann/.ssh: the server's policy grants /home/ann"; err == nil || err.Error()[:len(want)] != want {
		t.Errorf("error %v,\nwant %s...", err, want)
	}
	free, _ := c.Server("free")
	p = policy.Default()
	p.Command, p.Unconfined = []string{"srv"}, true
	err = free.Narrow(&p)
	if want := filepath.Join(dir, "cfg.json") + ":3:38: the server's policy runs it unconfined"; err == nil || err.Error()[:len(want)] != want {
		t.Errorf("error %v,\nwant %s...", err, want)
	}
}

func TestCovers(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"api.example.com", "api.example.com:443", true},
		{"api.example.com", "api.example.com", true},
		{"api.example.com:443", "api.example.com", false}, // b also allows 80
		{"api.example.com", "api.example.com:8443", false},
		{"*.example.com", "api.example.com", true},
		{"*.example.com", "*.api.example.com", true},
		{"*.example.com", "example.com", false},
		{"*.example.com", "*.example.com", true},
		{"api.example.com", "*.example.com", false},
		{"*", "anything.example.test", true},
		{"*", "198.51.100.7", false},
		{"api.example.com", "*", false},
		{"198.51.100.0/24", "198.51.100.7", true},
		{"198.51.100.7", "198.51.100.0/24", false},
		{"198.51.100.0/24:5432", "198.51.100.9:5432", true},
	} {
		a, err := policy.ParseHostSpec(tc.a)
		b, err2 := policy.ParseHostSpec(tc.b)
		if err != nil || err2 != nil {
			t.Fatal(err, err2)
		}
		if got := covers(a, b); got != tc.want {
			t.Errorf("covers(%s, %s) = %v", tc.a, tc.b, got)
		}
	}
}
