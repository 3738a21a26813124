package resolve

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

func allowHosts(specs ...string) (policy.Policy, []string) {
	p := policy.Default()
	p.AllowHosts = specs
	return p, []string{"AllowHosts"}
}

// A user's --allow-host over a policy file that says host narrows it to
// egress; each entry says who gave it: the built-in, the file at its
// line, the flag.
func TestCallersAllowHostNarrowsAFilesHostMode(t *testing.T) {
	h := someoneElse(t)
	writeFile(t, filepath.Join(h.WorkDir, "wide.yaml"), "extends: github\nnetwork:\n  mode: host\n")
	writeFile(t, filepath.Join(h.WorkDir, "mine.yaml"), "extends: github\nnetwork:\n  allow-hosts:\n    - ghe.example.test\n")
	over, given := allowHosts("api.example.test:8443")
	r, err := Resolve(Request{Command: []string{"github-mcp-server", "stdio"}, Policy: "wide.yaml", Overrides: over, Given: given, Host: h})
	if err != nil {
		t.Fatal(err)
	}
	if r.Policy.Net != policy.NetEgress {
		t.Errorf("--allow-host over mode host: network %s, want egress", r.Policy.Net)
	}
	if _, fromFile := r.Origin["Net"]; fromFile {
		t.Errorf("the mode is still said to come from %v, not from --allow-host", r.Origin["Net"])
	}

	r, err = Resolve(Request{Command: []string{"github-mcp-server", "stdio"}, Policy: "mine.yaml", Overrides: over, Given: given, Host: h})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range r.Hosts("AllowHosts") {
		line := strconv.Itoa(e.Line)
		if e.From.Kind == Builtin && e.Line > 0 {
			line = "N" // built-in files change; that it has a line is what counts
		}
		got = append(got, e.Spec+" "+e.From.Name+":"+line)
	}
	want := []string{"api.github.com:443 built-in github:N", "uploads.github.com:443 built-in github:N", "raw.githubusercontent.com:443 built-in github:N",
		"ghe.example.test mine.yaml:4", "api.example.test:8443 :0"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("entries and sources:\n%q\nwant\n%q", got, want)
	}
	kinds := []Kind{Builtin, Builtin, Builtin, File, Given}
	for i, e := range r.Hosts("AllowHosts") {
		if e.From.Kind != kinds[i] {
			t.Errorf("entry %s is of kind %d, want %d", e.Spec, e.From.Kind, kinds[i])
		}
	}
}

// --net host with --allow-host on the same command line contradicts
// itself; --net host alone over an allowlist widens it, the list kept
// and out of force; --net egress with nothing to reach is refused.
func TestNetModeOnTheCommandLine(t *testing.T) {
	h := someoneElse(t)
	for _, ref := range []string{"", "default"} {
		over, given := allowHosts("api.example.test")
		over.Net, given = policy.NetHost, append(given, "Net")
		_, err := Resolve(Request{Command: []string{"sh"}, Policy: ref, Overrides: over, Given: given, Host: h})
		var fe *field.Error
		if !asFieldError(err, &fe) || fe.Field != "Net" || !strings.Contains(fe.Render(policy.FlagOf), "--net host: contradicts --allow-host") {
			t.Errorf("policy %q, --net host --allow-host: %v; want the contradiction named in flags", ref, err)
		}
	}
	over := policy.Default()
	over.Net = policy.NetHost
	r, err := Resolve(Request{Command: []string{"npx", "-y", "@modelcontextprotocol/server-slack"}, Overrides: over, Given: []string{"Net"}, Host: h})
	if err != nil || r.Policy.Net != policy.NetHost || len(r.Policy.AllowHosts) != 1 {
		t.Errorf("--net host over slack: network %s, allow %q (%v); want host, the list kept", r.Policy.Net, r.Policy.AllowHosts, err)
	}
	over.Net = policy.NetEgress
	_, err = Resolve(Request{Command: []string{"sh"}, Overrides: over, Given: []string{"Net"}, Host: h})
	if err == nil || !strings.Contains(field.Message(err, policy.FlagOf), "--net egress: with no --allow-host reaches nothing") {
		t.Errorf("--net egress alone: %v", err)
	}
}

// postgres allows the database of the URL the launch line gives it; a
// launch line without one is refused before the server starts, and
// policy check, which has none, accepts the built-in.
func TestPostgresAllowsTheHostOfItsURL(t *testing.T) {
	h := someoneElse(t)
	line := []string{"npx", "-y", "@modelcontextprotocol/server-postgres@0.6.2", "postgresql://reader@db.example.test/shop"}
	r, err := Resolve(Request{Command: line, Host: h})
	if err != nil {
		t.Fatal(err)
	}
	if r.Ref != "postgres" || r.Policy.Net != policy.NetEgress || strings.Join(r.Policy.AllowHosts, ",") != "db.example.test:5432" {
		t.Errorf("%s: policy %s, network %s, allow %q; want egress to db.example.test:5432", line, r.Ref, r.Policy.Net, r.Policy.AllowHosts)
	}
	_, err = Resolve(Request{Command: line[:3], Host: h})
	if err == nil || !strings.Contains(err.Error(), "found no URL among the server's arguments") {
		t.Errorf("without the URL: %v", err)
	}
	if _, err := Resolve(Request{PolicyOnly: true, Policy: "postgres", Host: h}); err != nil {
		t.Errorf("policy check of postgres: %v", err)
	}
}

func asFieldError(err error, fe **field.Error) bool {
	e, ok := err.(*field.Error)
	*fe = e
	return ok
}
