package main

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/lock"
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

// The real servers, prepared through the registry into one state base
// (each package is downloaded once), each run confined by `run` under
// the built-in its launch line selects with no network.
func TestRealServersConfined(t *testing.T) {
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
	t.Run("run", func(t *testing.T) {
		for _, srv := range pinnedServers {
			t.Run(srv.spec, func(t *testing.T) {
				t.Parallel()
				listsItsToolsConfined(t, b, unshare, srv)
			})
		}
		t.Run(stripeSpec, func(t *testing.T) {
			t.Parallel()
			startTimeoutNamesTheDeniedHost(t, b)
		})
	})
	t.Run("state", func(t *testing.T) {
		scopedNamesakesKeepApart(t, b, "@playwright/mcp", "@stripe/mcp")
	})
	t.Run("lock", func(t *testing.T) { preparedAreLocked(t, b) })
}

// preparedAreLocked: each prepare recorded its package in the lock, at
// the version its line names, with the integrity the registry gives.
func preparedAreLocked(t *testing.T, b *stateBase) {
	f, err := lock.Load(b.lock)
	if err != nil {
		t.Fatal(err)
	}
	for _, srv := range pinnedServers {
		name, version, _ := strings.Cut(srv.spec[1:], "@")
		name = srv.spec[:1] + name
		_, s, ok := f.Server(name)
		if !ok || s.Package == nil || s.Package.Name != name || s.Package.Version != version ||
			!strings.HasPrefix(s.Package.Integrity, "sha512-") || s.Package.Registry == "" || s.Package.Published.IsZero() {
			t.Errorf("the lock's %s: %+v; want %s at %s with its integrity, registry and publish time", name, s, name, version)
		}
	}
	if _, s, ok := f.Server("@modelcontextprotocol/server-memory"); ok {
		entry, _ := json.MarshalIndent(s.Package, "", "  ")
		t.Logf("the lock's entry of server-memory:\n%s", entry)
	}
}

// listsItsToolsConfined: srv lists exactly the tools the same installed
// package lists unconfined (in a network namespace of its own, with no
// network either, and a pid namespace that nothing it starts outlives).
func listsItsToolsConfined(t *testing.T, b *stateBase, unshare string, srv pinnedServer) {
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

// stripeSpec is a proxy to its vendor's remote server (mcp.stripe.com)
// that relays every message there and answers none while it cannot
// reach it: a server that needs a host its policy does not allow. Before
// npm scopes named state directories it shared `mcp` with @playwright/mcp.
const stripeSpec = "@stripe/mcp@0.3.3"

// stripeLine starts it as its README says, with a made-up restricted key:
// it never leaves the sandbox.
var stripeLine = []string{"npx", "-y", stripeSpec, "--api-key=rk_test_mcpsandbox"}

// Under its built-in (no network), the Go SDK client's handshake gets
// -31112 after --start-timeout, naming the host the server was denied and
// the flag that allows it, long before a host's own 60s. The client asks
// server/discover first and, refused, initialize: both are answered so.
func startTimeoutNamesTheDeniedHost(t *testing.T, b *stateBase) {
	b.prepare(t, stripeLine...)
	s := b.start(t, append([]string{"--start-timeout", "5s", "--"}, stripeLine...)...)
	want := "MCP server did not answer initialize within mcpsandbox's --start-timeout 5s: " +
		"the server tried to reach mcp.stripe.com, which its policy does not allow (network mode none); allow it with --allow-host mcp.stripe.com"
	we, ok := rpcError(s.err)
	if !ok || we.Code != -31112 || we.Message != want {
		t.Fatalf("connecting got %v; want -31112 %q; stderr:\n%s", s.err, want, s.stderr)
	}
	var data struct{ DeniedHosts []string }
	if err := json.Unmarshal(we.Data, &data); err != nil || !slices.Equal(data.DeniedHosts, []string{"mcp.stripe.com"}) {
		t.Errorf("the error's data %s: deniedHosts want [mcp.stripe.com] (%v)", we.Data, err)
	}
	if s.took > 30*time.Second {
		t.Errorf("the host waited %s for the answer; want it after the --start-timeout of each request, well before its own 60s", s.took)
	}
	discover := regexp.MustCompile(`did not answer the host's server/discover in time.* denied_hosts=\[mcp.stripe.com\]`)
	if !discover.MatchString(s.stderr.String()) {
		t.Errorf("the log does not say the host's server/discover was answered naming mcp.stripe.com:\n%s", s.stderr)
	}
	t.Logf("policy %s; answered after %s: %s", s.policyLogged(), s.took, we.Message)
}

// scopedNamesakesKeepApart: packages named alike in two scopes, prepared
// above, got a state directory each, owned by a uid of its own, whose npm
// cache holds its own package alone.
func scopedNamesakesKeepApart(t *testing.T, b *stateBase, pkgs ...string) {
	uids := map[uint32]string{}
	for _, pkg := range pkgs {
		dir := filepath.Join(b.dir, "npm+"+strings.ReplaceAll(pkg, "/", "+"))
		if _, err := os.Lstat(dir); err != nil {
			t.Errorf("%s has no state directory of its own: %v; the state base holds %q", pkg, err, b.stateDirs(t))
			continue
		}
		uid := ownerOf(t, dir)
		if other, dup := uids[uid]; dup || uid == 0 {
			t.Errorf("%s is owned by uid %d (%s's too?); want a uid of its own", dir, uid, other)
		}
		uids[uid] = dir
		if got := npxPackages(t, dir); !slices.Equal(got, []string{pkg}) {
			t.Errorf("the npm cache in %s holds %q; want %s alone", dir, got, pkg)
		}
	}
	t.Logf("state directories %q", b.stateDirs(t))
}

// npxPackages are the packages the npx installs in state dir's npm cache
// were made for.
func npxPackages(t *testing.T, dir string) []string {
	t.Helper()
	found, _ := filepath.Glob(filepath.Join(dir, "npm", "_npx", "*", "package.json"))
	var pkgs []string
	for _, f := range found {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var install struct{ Dependencies map[string]string }
		if err := json.Unmarshal(data, &install); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		pkgs = append(pkgs, slices.Collect(maps.Keys(install.Dependencies))...)
	}
	slices.Sort(pkgs)
	return pkgs
}
