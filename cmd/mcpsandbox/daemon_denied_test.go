package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/daemon"
)

// A server that looks up a host at start and never answers, under its
// runtime's built-in policy (no network) with health.start-timeout from
// its policy file: `mcpsandbox status` names the host and the
// --allow-host that allows it (denied_hosts in its JSON), and the host's
// initialize gets -31112 saying the same.
func TestDaemonNamesTheHostsAServerWasDenied(t *testing.T) {
	requireConfinement(t)
	pol := filepath.Join(t.TempDir(), "stripe.yaml")
	if err := os.WriteFile(pol, []byte("extends: node\nhealth:\n  start-timeout: 5s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lookup := `require("dns").lookup(process.argv[1], () => process.stdin.resume())`
	d := startE2EDaemon(t, claudeConfig(t, daemonEntry{"stripe", map[string]any{
		"command": "node", "args": []string{"-e", lookup, "mcp.stripe.com"}, "policy": pol,
	}}), nil)
	h := startRawHost(t, -1, d.connectArgv("stripe")...)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	st := d.waitStatus("stripe's denied host", func(st *daemon.Status) bool {
		s, _ := serverStatus(st, "stripe")
		return len(s.Instances) > 0 && len(s.Instances[0].DeniedHosts) > 0
	})
	s, _ := serverStatus(st, "stripe")
	i := s.Instances[0]
	if len(i.DeniedHosts) != 1 || i.DeniedHosts[0] != (daemon.DeniedHost{Host: "mcp.stripe.com", Fix: "--allow-host mcp.stripe.com"}) {
		t.Errorf("denied_hosts %+v, want mcp.stripe.com with its --allow-host", i.DeniedHosts)
	}
	out, errOut, err := d.cli("status")
	if want := i.ID + " tried hosts its policy does not allow: mcp.stripe.com; allow with --allow-host mcp.stripe.com"; err != nil || !strings.Contains(out, want) {
		t.Errorf("status: %v\n%s%s\nwant a line %q", err, out, errOut, want)
	}
	a := h.next()
	if a.Error == nil || a.Error.Code != -31112 || a.Error.Data.Kind != "start-timeout" || !strings.Contains(a.Error.Message, "5s: the server tried to reach mcp.stripe.com") ||
		!strings.HasSuffix(a.Error.Message, "allow it with --allow-host mcp.stripe.com") {
		t.Errorf("initialize answered %+v, want -31112 naming mcp.stripe.com and its --allow-host", a.Error)
	}
	t.Logf("the host read: %s", a.Error.Message)
}
