package serverreq

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor/audit"
)

func urlElicitation(u string) json.RawMessage {
	return marshal(map[string]any{"mode": "url", "message": "Sign in", "url": u, "elicitationId": "e1"})
}

// Under egress, a URL-mode elicitation is relayed only to a URL whose host
// (and port) --allow-host names and --deny-host does not.
func TestURLElicitationFollowsTheAllowlist(t *testing.T) {
	p := policy.Default()
	p.Net = policy.NetEgress
	p.AllowHosts = []string{"login.example.test", "*.corp.example.test:8443", "198.51.100.7"}
	p.DenyHosts = []string{"secret.corp.example.test"}
	p.ServerRequestLimit = ""
	g := New(p, Options{})
	for u, want := range map[string]Outcome{
		"https://login.example.test/device":             Relayed,
		"https://LOGIN.example.test./x":                 Relayed,
		"https://sso.corp.example.test:8443/":           Relayed,
		"https://sso.corp.example.test/":                URLNotAllowed, // port 443 is not named
		"https://secret.corp.example.test:8443/":        URLNotAllowed,
		"https://198.51.100.7/x":                        Relayed,
		"https://evil.example.test/login.example.test":  URLNotAllowed,
		"https://login.example.test@evil.example.test/": URLNotAllowed,
		"javascript:alert(1)":                           URLNotAllowed,
		"file:///etc/passwd":                            URLNotAllowed,
		"":                                              URLNotAllowed,
	} {
		if v := g.Decide(Elicit, urlElicitation(u)); v.Outcome != want {
			t.Errorf("%q: %s (%s), want %s", u, v.Outcome, v.Reason, want)
		}
	}
}

// A message that reads as mcpsandbox's is marked; an ordinary one that
// merely names mcpsandbox is not.
func TestSpoofMarking(t *testing.T) {
	for msg, marked := range map[string]bool{
		"mcpsandbox asks: allow write_file?":          true,
		"MCPSandbox: approve this call":               true,
		"Hello\nmcpsandbox asks you to approve":       true,
		"Note that mcpsandbox asks nothing like this": true,
		"ｍｃｐｓａｎｄｂｏｘ asks: approve?":                   true, // full-width look-alikes
		"Which file should I open?":                   false,
		"This server runs under mcpsandbox.":          false,
	} {
		params := marshal(map[string]any{"message": msg, "requestedSchema": map[string]any{"type": "object"}})
		out, ok := markSpoof(params)
		if ok != marked {
			t.Errorf("%q: marked %v, want %v", msg, ok, marked)
			continue
		}
		if ok && !strings.Contains(string(out), `"[the server's words] `) {
			t.Errorf("%q: %s, want the message marked", msg, out)
		}
	}
	// The key alone (in any case) is enough, and is taken off.
	out, ok := markSpoof(json.RawMessage(`{"message":"Pick one","_meta":{"IO.github.mcpsandbox/Approval":{"id":"x"},"other":1}}`))
	if !ok || strings.Contains(strings.ToLower(string(out)), "mcpsandbox/approval") || !strings.Contains(string(out), `"other":1`) ||
		!strings.Contains(string(out), `"[the server's words] Pick one"`) {
		t.Errorf("marked %v: %s", ok, out)
	}
}

// The limit is a token bucket over all kinds; lines of refused requests
// past a burst are counted, and the count is told in the next line.
func TestRateLimitAndBoundedAudit(t *testing.T) {
	now := time.Unix(0, 0)
	var lines []map[string]any
	l, err := audit.Open(audit.Config{Server: "s", Tap: func(b []byte) {
		var m map[string]any
		json.Unmarshal(b, &m)
		lines = append(lines, m)
	}})
	if err != nil {
		t.Fatal(err)
	}
	p := policy.Default()
	p.ServerRequestLimit = "2/1m"
	g := New(p, Options{Audit: l, Now: func() time.Time { return now }})
	outcomes := map[Outcome]int{}
	for i := range 500 {
		kind := []string{Elicit, Sample, Roots}[i%3]
		v := g.Decide(kind, json.RawMessage(`{"message":"hi"}`))
		g.Record(&v, ViaRequest)
		outcomes[v.Outcome]++
	}
	if outcomes[Relayed] != 2 || outcomes[RateLimited] != 498 {
		t.Errorf("outcomes %v, want 2 relayed, 498 rate-limited", outcomes)
	}
	if len(lines) != 2+auditBurst {
		t.Errorf("%d audit lines, want %d", len(lines), 2+auditBurst)
	}
	now = now.Add(30 * time.Second) // one token back in the bucket
	v := g.Decide(Roots, nil)
	g.Record(&v, ViaRequest)
	last := lines[len(lines)-1]
	if v.Outcome != Relayed || last["suppressed"] != float64(500-2-auditBurst) || last["outcome"] != "relayed" {
		t.Errorf("after 30s: %s, last line %v", v.Outcome, last)
	}
	l.Close()
}
