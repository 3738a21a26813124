package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/internal/testnet"
	"github.com/mcpsandbox/mcpsandbox/internal/testregistry"
	"github.com/mcpsandbox/mcpsandbox/lock"
)

// An npm package whose install script fetches from a host other than the
// registry, as puppeteer fetches its browser: served by a registry of the
// test's own on the test network, the script fetching from another test
// host unless the package's own variable says to skip it.

const (
	fetchPkg     = "fixture-fetch"
	fetchVersion = "1.0.0"
	fetchSpec    = fetchPkg + "@" + fetchVersion
	fetchSkipVar = "FIXTURE_SKIP_DOWNLOAD"
)

// fetchInstallScript is the package's install script: it downloads "/" of
// the other test host, and fails, naming why, when it cannot.
var fetchInstallScript = `if (process.env.` + fetchSkipVar + ` === "true") { console.log("download skipped"); process.exit(0) }
require("http").get("http://` + testnet.OtherName + `/", r => {
  let body = ""
  r.on("data", d => body += d)
  r.on("end", () => { require("fs").writeFileSync(__dirname + "/downloaded.txt", body); console.log("downloaded") })
}).on("error", e => { console.error("download failed: " + e.message); process.exit(1) })
`

// fetchNet is the test network with the registry serving the package.
func fetchNet(t *testing.T) *testnet.Env {
	t.Helper()
	requireConfinement(t)
	if testing.Short() {
		t.Skip("-short: prepare runs npm confined")
	}
	e := testnet.Start(t, testnet.Options{})
	reg := testregistry.New(t)
	reg.Publish(testregistry.Package{Name: fetchPkg, Version: fetchVersion, Files: map[string]string{
		"package.json": fmt.Sprintf(`{"name": %q, "version": %q, "bin": {%q: "index.js"}, "scripts": {"install": "node install.js"}}`, fetchPkg, fetchVersion, fetchPkg),
		"index.js":     "#!/usr/bin/env node\n",
		"install.js":   fetchInstallScript,
	}})
	e.AddHost(testnet.RegistryName, testnet.RegistryAddr, 80, reg)
	return e
}

// runIn runs this test binary as `mcpsandbox ARGS` in the test network,
// resolving with its DNS, with env; it returns its output and exit status.
func runIn(t *testing.T, e *testnet.Env, dir string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testenv.Wait(3*time.Minute))
	defer cancel()
	cmd := exec.CommandContext(ctx, self(t), append([]string{asCLI}, args...)...)
	cmd.Dir, cmd.Env, cmd.WaitDelay = dir, env, 10*time.Second
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := e.StartDirect(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); ctx.Err() != nil {
		t.Fatalf("mcpsandbox %s: %v after %s\n%s%s", strings.Join(args, " "), err, testenv.Wait(3*time.Minute), &out, &errOut)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// downloads is how many connections the other test host's web port saw.
func downloads(e *testnet.Env) int { return e.Listener(testnet.OtherAddr, 80).Count() }

// prepare of a package whose install script fetches from another host
// fails without --allow-host, its last line naming the script, the host
// and the exact command that prepares it; that command prepares it, the
// script reaching the host.
func TestPrepareAllowHostReachesWhatTheInstallFetches(t *testing.T) {
	e := fetchNet(t)
	registry := "npm_config_registry=http://" + testnet.RegistryName + "/"
	line := []string{"npx", "-y", fetchSpec}

	_, stderr, code := runIn(t, e, "/", newStateBase(t, registry).env, append([]string{"prepare", "--"}, line...)...)
	last := lastLineOf(stderr)
	wantFix := "prepare with: mcpsandbox prepare --allow-host " + testnet.OtherName + " -- npx -y " + fetchSpec
	if code != exitFailure || !strings.HasPrefix(last, "mcpsandbox prepare: fetching the packages failed (exited with status 1): ") ||
		!strings.Contains(last, "the install script of "+fetchSpec+" (node install.js) exited with status 1 and tried to reach "+testnet.OtherName+" (not allowed); ") ||
		!strings.HasSuffix(last, wantFix) {
		t.Fatalf("prepare without --allow-host: exit %d, last line %q; want 1, naming the script, %s and %q\nstderr:\n%s", code, last, testnet.OtherName, wantFix, stderr)
	}
	t.Logf("without --allow-host: %s", last)
	if !strings.Contains(stderr, "download failed: getaddrinfo ENOTFOUND "+testnet.OtherName) {
		t.Errorf("the install script's own words are not shown:\n%s", stderr)
	}
	if n := downloads(e); n != 0 {
		t.Errorf("%s saw %d connections from a prepare that did not allow it", testnet.OtherName, n)
	}

	// The fix as the line gives it, in a state directory of its own.
	fix := strings.Fields(strings.TrimPrefix(wantFix, "prepare with: mcpsandbox "))
	base := newStateBase(t, registry)
	out, stderr, code := runIn(t, e, "/", base.env, fix...)
	if code != exitOK || !strings.Contains(out, "prepared ") {
		t.Fatalf("%s: exit %d\n%s%s", wantFix, code, out, stderr)
	}
	if n := downloads(e); n != 1 {
		t.Errorf("%s saw %d connections, want the install script's one", testnet.OtherName, n)
	}
	if got := downloaded(t, base.dir); !strings.Contains(got, testnet.Greeting(testnet.OtherName, "http")) {
		t.Errorf("the install script's download in the cache: %q", got)
	}
	// The lock names the host the install reached, not the registry.
	f, err := lock.Load(base.lock)
	if err != nil {
		t.Fatal(err)
	}
	if _, s, ok := f.Server(fetchPkg); !ok || s.Package == nil || !slices.Equal(s.Package.InstallHosts, []string{testnet.OtherName + ":80"}) {
		t.Errorf("the lock's %s: %+v; want its install hosts to be %s:80", fetchPkg, s, testnet.OtherName)
	}
}

// wrap passes the entry's env to the prepare it runs: the package's own
// variable in the host's file skips the download, and the entry is
// prepared and wrapped, with nothing fetched from the other host. Without
// it the entry is left unwrapped, its line naming the host and the
// commands that prepare and wrap it.
func TestWrapPreparesWithTheEntrysEnv(t *testing.T) {
	e := fetchNet(t)
	home, env := frictionHome(t)
	env = append(env, "npm_config_registry=http://"+testnet.RegistryName+"/")
	file := filepath.Join(home, ".cursor", "mcp.json")
	wrap := func(entryEnv string) (string, string, int, string) {
		t.Helper()
		writeTree(t, home, map[string]string{".cursor/mcp.json": fmt.Sprintf(`{"mcpServers": {"fetcher": {"command": "npx", "args": ["-y", %q], "env": {%s}}}}`, fetchSpec, entryEnv)})
		base := newStateBase(t) // each wrap prepares into a state directory of its own
		out, stderr, code := runIn(t, e, home, append(env, "MCPSANDBOX_STATE_DIR="+base.dir), "wrap", "--command", "/usr/local/bin/mcpsandbox", file)
		return out, stderr, code, base.dir
	}

	out, stderr, code, _ := wrap(`"OTHER": "x"`)
	want := "  fetcher: not wrapped: preparing it failed: fetching the packages failed (exited with status 1): the install script of " + fetchSpec +
		" (node install.js) exited with status 1 and tried to reach " + testnet.OtherName + " (not allowed); prepare with: mcpsandbox prepare --allow-host " + testnet.OtherName +
		" --env OTHER -- npx -y " + fetchSpec + "; once it is prepared, mcpsandbox wrap --no-prepare " + file + " wraps it\n"
	if code != exitFailure || !strings.Contains(out, want) {
		t.Errorf("wrap without %s: exit %d, want %d and %q:\n%s%s", fetchSkipVar, code, exitFailure, want, out, stderr)
	}

	out, stderr, code, state := wrap(fmt.Sprintf(`%q: "true"`, fetchSkipVar))
	if code != exitOK || !strings.Contains(out, "  fetcher: wrapped: /usr/local/bin/mcpsandbox run --env "+fetchSkipVar+" -- npx -y "+fetchSpec) {
		t.Fatalf("wrap: exit %d\n%s%s", code, out, stderr)
	}
	if n := downloads(e); n != 0 {
		t.Errorf("%s saw %d connections", testnet.OtherName, n)
	}
	if got := downloaded(t, state); got != "" {
		t.Errorf("the install script downloaded: %q", got)
	}
}

// downloaded is what the install script wrote in the npx cache of a
// state directory under base ("" nothing).
func downloaded(t *testing.T, base string) string {
	t.Helper()
	found, _ := filepath.Glob(filepath.Join(base, "*", "npm", "_npx", "*", "node_modules", fetchPkg, "downloaded.txt"))
	if len(found) == 0 {
		return ""
	}
	data, err := os.ReadFile(found[0])
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func lastLineOf(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
