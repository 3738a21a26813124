package main

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// pinnedServer is a popular stdio MCP server from npm, pinned, as a host's
// configuration starts it: `npx -y SPEC ARGS...`; bin is the program its
// package installs.
type pinnedServer struct {
	spec string
	bin  string
	args func(t *testing.T) []string // nil: none
}

// pinnedServers work confined, offline after prepare, with the tools they
// have unconfined: the reference servers and third-party ones among the
// most downloaded, each small and without install scripts, and each able
// to list its tools with no network, account or browser.
var pinnedServers = []pinnedServer{
	{spec: "@modelcontextprotocol/server-memory@2026.8.31", bin: "mcp-server-memory"},
	{spec: "@modelcontextprotocol/server-filesystem@2026.8.31", bin: "mcp-server-filesystem",
		args: func(t *testing.T) []string { return []string{sandboxDir(t, "mcpsandbox-real-fs-")} }},
	{spec: "@playwright/mcp@0.0.86", bin: "playwright-mcp"},
	{spec: "chrome-devtools-mcp@1.11.0", bin: "chrome-devtools-mcp"},
	{spec: "@upstash/context7-mcp@4.1.1", bin: "context7-mcp"},
	{spec: "@notionhq/notion-mcp-server@2.5.2", bin: "notion-mcp-server"},
	{spec: "@circleci/mcp-server-circleci@0.20.0", bin: "mcp-server-circleci"},
}

// Each real server is prepared through the registry, started by `run`
// under the built-in its launch line selects with no network, and lists
// exactly the tools the same installed package lists unconfined (in a
// network namespace of its own, with no network either, and a pid
// namespace that nothing it starts outlives).
func TestRealServersListTheirToolsConfined(t *testing.T) {
	requireConfinement(t)
	testenv.NPMServer(t, "server-memory") // the npm test tier: prepare needs the registry
	if os.Geteuid() != 0 {
		t.Skip("the unconfined comparison runs in a network namespace of its own, which needs root here")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("unshare (util-linux) is not installed")
	}
	b := newStateBase(t)
	for _, srv := range pinnedServers {
		t.Run(srv.spec, func(t *testing.T) {
			t.Parallel()
			var args []string
			if srv.args != nil {
				args = srv.args(t)
			}
			line := append([]string{"npx", "-y", srv.spec}, args...)
			took := b.prepare(t, line...)
			s := b.mustStart(t, append([]string{"--net", "none", "--"}, line...)...)
			confined := slices.Sorted(maps.Keys(s.toolNames(t)))
			s.stop()

			bin := installedBin(t, b, srv)
			env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
			// A pid namespace too: what the server leaves running in the
			// background (chrome-devtools-mcp's npm) ends with it.
			m, _ := mustHost(t, "", env, append([]string{unshare, "--net", "--pid", "--fork", "--kill-child", "--", bin}, args...)...)
			unconfined := m.tools(t)
			slices.Sort(unconfined)
			m.cs.Close()
			m.wait(t) // its exit status is the server's own
			if len(unconfined) == 0 || !slices.Equal(confined, unconfined) {
				t.Errorf("tools confined (policy %s):\n  %q\nunconfined:\n  %q", s.policyLogged(), confined, unconfined)
			}
			t.Logf("prepared in %s; policy %s; %d tools", took, s.policyLogged(), len(confined))
		})
	}
}

// installedBin is srv's program as its prepare installed it.
func installedBin(t *testing.T, b *stateBase, srv pinnedServer) string {
	t.Helper()
	found, _ := filepath.Glob(filepath.Join(b.dir, "*", "npm", "_npx", "*", "node_modules", ".bin", srv.bin))
	if len(found) != 1 {
		t.Fatalf("%s: its program %s in the prepared caches under %s: %q, want one", srv.spec, srv.bin, b.dir, found)
	}
	return found[0]
}
