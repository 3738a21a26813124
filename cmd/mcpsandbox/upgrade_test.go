package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/contract"
	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/internal/testregistry"
	"github.com/mcpsandbox/mcpsandbox/launch"
	"github.com/mcpsandbox/mcpsandbox/lock"
	"github.com/mcpsandbox/mcpsandbox/npmregistry"
)

// memorySpec is the reference memory server's package; memoryFrom and
// memoryTo are two of its published versions whose contracts differ:
// the later one changed every tool (titles, annotations, output schemas)
// and serves a resource.
const (
	memorySpec = "@modelcontextprotocol/server-memory"
	memoryFrom = "2025.8.4"
	memoryTo   = "2026.8.31"
)

// A server upgraded from one published version of a real npm server to
// another, in a daemon's file and in a host's file wrap rewrote. The first upgrade (from 2025.4.25, which the lock
// does not know) pins the contract of memoryFrom. The next one, with no
// terminal and no --yes, shows the diff of memoryTo against that pin
// (prepared apart, probed in a sandbox with no network) and changes
// nothing; approved on a terminal (y) it writes the version into both files (every other
// byte kept) and both locks, and the running daemon swaps its
// instance: the Go SDK client connected through it goes on, answered by
// the new version.
func TestUpgradeARealServerUnderADaemon(t *testing.T) {
	requireConfinement(t)
	testenv.NPMServer(t, "server-memory") // the npm test tier: prepare needs the registry
	b := newStateBase(t)
	env := append(b.env, "HOME="+t.TempDir()) // no host files of the machine's
	entry := func(version string) string {
		return `{"command": "npx",   "args": ["-y", "` + memorySpec + `@` + version + `"]}`
	}
	config := func(version string) string {
		return "{\n  \"mcpServers\": {\n    \"memory\": " + entry(version) + ",\n    \"other\": {\"command\": \"npx\", \"args\": [\"-y\", \"" + memorySpec + "@2025.4.25\"], \"disabled\": true}\n  }\n}\n"
	}
	d := startE2EDaemon(t, config("2025.4.25"), env)
	// A host's file that wrap rewrote to run the same server itself,
	// with a lock of its own.
	hostFile := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	hostLock := filepath.Join(filepath.Dir(hostFile), "host.lock.json")
	if err := os.WriteFile(hostFile, []byte(`{"mcpServers": {"memory": `+entry("2025.4.25")+`}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(self(t), asCLI, "wrap", "--no-prepare", "--command", "/usr/bin/mcpsandbox", hostFile).CombinedOutput(); err != nil {
		t.Fatalf("wrap: %v\n%s", err, out)
	}
	wrapped := strings.Replace(readText(t, hostFile), `"run",`, `"run", "--lock", "`+hostLock+`",`, 1)
	if err := os.WriteFile(hostFile, []byte(wrapped), 0o600); err != nil {
		t.Fatal(err)
	}
	argv := func(args ...string) []string {
		return append([]string{self(t), asCLI, "upgrade", "memory", "--config", d.config, "--file", hostFile, "--socket-dir", d.sockets}, args...)
	}
	upgrade := func(args ...string) (string, string, int) {
		a := argv(args...)
		cmd := exec.Command(a[0], a[1:]...)
		cmd.Env = env // stdin: /dev/null, no terminal
		var out, errs strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errs
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return out.String(), errs.String(), cmd.ProcessState.ExitCode()
	}
	lockPath := lock.BesideConfig(d.config)

	out, errs, code := upgrade("--to", memoryFrom, "--yes")
	if code != 0 {
		t.Fatalf("first upgrade: exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, "the lock approved no contract of it yet") || !strings.Contains(out, "tool:create_entities added") {
		t.Errorf("first upgrade's diff:\n%s", out)
	}
	h := d.mustConnectGo(t, "memory", "")
	if _, isErr, err := h.call("read_graph", nil); err != nil || isErr {
		t.Fatalf("read_graph on %s: %v", memoryFrom, err)
	}
	beforeConfig, beforeLock, beforeHost := readText(t, d.config), readText(t, lockPath), readText(t, hostFile)
	if !strings.Contains(beforeHost, memorySpec+"@"+memoryFrom) || readText(t, hostLock) == "" {
		t.Errorf("the first upgrade did not write the wrapped host file or its lock:\n%s", beforeHost)
	}

	out, errs, code = upgrade("--to", memoryTo)
	if code != 1 || !strings.Contains(errs, "no terminal to ask on") || !strings.Contains(errs, "--to "+memoryTo+" --yes") {
		t.Errorf("upgrade with no terminal and no --yes: exit %d, stderr:\n%s", code, errs)
	}
	for _, want := range []string{
		"upgrade " + memorySpec + ": " + memoryFrom + " → " + memoryTo,
		"tool:create_entities changed", "tool:read_graph changed", `"Read Graph"`, "resource:memory://knowledge-graph added",
		"in a probe sandbox (no network, no secrets, an empty state)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the diff lacks %q:\n%s", want, out)
		}
	}
	if readText(t, d.config) != beforeConfig || readText(t, lockPath) != beforeLock || readText(t, hostFile) != beforeHost {
		t.Errorf("an upgrade not approved changed a file or the lock")
	}

	// Approved on a terminal (script(1) gives it one), answering y.
	cmd := exec.Command("script", "--quiet", "--return", "--command", cmdline.ShellJoin(argv("--to", memoryTo)), "/dev/null")
	cmd.Env, cmd.Stdin = env, strings.NewReader("y\n")
	outb, err := cmd.CombinedOutput()
	if out = string(outb); err != nil {
		t.Fatalf("upgrade approved on a terminal: %v\n%s", err, out)
	}
	if !strings.Contains(out, "Upgrade "+memorySpec+" to "+memoryTo+"? [y/N]") {
		t.Errorf("upgrade on a terminal did not ask:\n%s", out)
	}
	if got, want := readText(t, d.config), config(memoryTo); got != strings.Replace(beforeConfig, entry(memoryFrom), entry(memoryTo), 1) || got != want {
		t.Errorf("config after the upgrade:\n%s\nwant only the version changed:\n%s", got, want)
	}
	if !strings.Contains(out, "swapped to the new launch line, sessions kept: memory") {
		t.Errorf("the daemon's reload, as upgrade reports it:\n%s", out)
	}
	if got, want := readText(t, hostFile), strings.Replace(beforeHost, memorySpec+"@"+memoryFrom, memorySpec+"@"+memoryTo, 1); got != want {
		t.Errorf("host file after the upgrade:\n%s\nwant only the version changed:\n%s", got, want)
	}
	for _, p := range []string{lockPath, hostLock} {
		f, err := lock.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		_, s, ok := f.Server(memorySpec)
		if !ok || s.Package == nil || s.Package.Version != memoryTo {
			t.Fatalf("lock %s after the upgrade: %+v", p, s)
		}
		if _, ok := s.Contract.Get(contract.Resource, "memory://knowledge-graph"); !ok {
			t.Errorf("the lock %s does not approve the new version's resource", p)
		}
	}
	// The session goes on, on the new version: it serves the resource.
	if _, isErr, err := h.call("read_graph", nil); err != nil || isErr {
		t.Errorf("read_graph after the swap: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), e2eWait)
	defer cancel()
	res, err := h.cs.ListResources(ctx, &mcp.ListResourcesParams{})
	if err != nil || len(res.Resources) == 0 || res.Resources[0].URI != "memory://knowledge-graph" {
		t.Errorf("resources/list after the swap: %+v, %v: want the new version's resource", res, err)
	}
}

// A candidate published less than the cooldown ago is refused before
// anything is fetched, saying until when and how to take it anyway; the
// configuration is left as it was.
func TestUpgradeRefusesAVersionUnderTheCooldown(t *testing.T) {
	reg := testregistry.New(t)
	reg.Publish(testregistry.Package{Name: "mcp-fixture", Version: "1.0.0", Published: time.Now().Add(-30 * 24 * time.Hour)})
	reg.Publish(testregistry.Package{Name: "mcp-fixture", Version: "1.1.0", Published: time.Now().Add(-time.Hour)})
	t.Setenv("npm_config_registry", reg.Start())
	t.Setenv("HOME", t.TempDir())
	dir := t.TempDir()
	cfg := filepath.Join(dir, "daemon.json")
	data := `{"mcpServers": {"fixture": {"command": "npx", "args": ["-y", "mcp-fixture@1.0.0"]}}}` + "\n"
	if err := os.WriteFile(cfg, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code := runCLI(t, "upgrade", "fixture", "--config", cfg, "--socket-dir", dir)
	for _, want := range []string{"mcp-fixture@1.1.0 was published 1h ago", "younger than the cooldown of 48h", "--cooldown 0"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if code != 1 || readText(t, cfg) != data {
		t.Errorf("exit %d, config %s: want 1 and the config as it was", code, readText(t, cfg))
	}
	if _, err := os.Stat(lock.BesideConfig(cfg)); !os.IsNotExist(err) {
		t.Errorf("a refused upgrade wrote the lock: %v", err)
	}
}

// A lock that does not load stops the upgrade with the lock's error, which
// names the file and the fix, before anything is fetched or changed.
func TestUpgradeRefusesALockThatDoesNotLoad(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	dir := t.TempDir()
	cfg := filepath.Join(dir, "daemon.json")
	data := `{"mcpServers": {"fixture": {"command": "npx", "args": ["-y", "mcp-fixture@1.0.0"]}}}` + "\n"
	if err := os.WriteFile(cfg, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock.BesideConfig(cfg), []byte("{\"version\": 1,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code := runCLI(t, "upgrade", "fixture", "--config", cfg, "--socket-dir", dir)
	if code != 1 || !strings.HasPrefix(errs, "mcpsandbox upgrade: "+lock.BesideConfig(cfg)+":") || readText(t, cfg) != data {
		t.Errorf("exit %d, config %s, stderr:\n%s\nwant 1, the config as it was, and the lock's error", code, readText(t, cfg), errs)
	}
}

// The lock upgrade reads and writes is the one the server's relay reads:
// a daemon server whose policy names a lock (pins.lock) is pinned there,
// not beside the config, so that lock's error stops the upgrade.
func TestUpgradeReadsTheLockThePolicyNames(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	dir := t.TempDir()
	cfg, named := filepath.Join(dir, "daemon.json"), filepath.Join(dir, "ci.lock.json")
	data := `{"mcpServers": {"fixture": {"command": "npx", "args": ["-y", "mcp-fixture@1.0.0"], "policy": "./ci.yaml"}}}` + "\n"
	writeTree(t, dir, map[string]string{"daemon.json": data, "ci.yaml": "extends: npx\npins:\n  lock: " + named + "\n", "ci.lock.json": "{\"version\": 1,\n"})
	_, errs, code := runCLI(t, "upgrade", "fixture", "--config", cfg, "--socket-dir", dir)
	if code != 1 || !strings.HasPrefix(errs, "mcpsandbox upgrade: "+named+":") || readText(t, cfg) != data {
		t.Errorf("exit %d, config %s, stderr:\n%s\nwant 1, the config as it was, and the error of the lock ci.yaml names", code, readText(t, cfg), errs)
	}
}

// readText is a file's contents, "" when it does not exist.
func readText(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(data)
}

// Once the lock records who built a package, a candidate with no verified
// provenance, or built elsewhere, is refused, naming both.
func TestUpgradeRefusesAnotherPublisher(t *testing.T) {
	built := &lock.Provenance{Issuer: "https://token.actions.githubusercontent.com", Repository: "https://github.com/example/server", Workflow: ".github/workflows/release.yml"}
	other := *built
	other.Repository = "https://github.com/someone/fork"
	u := &upgrade{spec: launch.NpmSpec{Name: "mcp-fixture"}, lockPaths: []string{"/etc/mcpsandbox/daemon.lock.json"},
		locked: &lock.Server{Package: &lock.Package{Name: "mcp-fixture", Version: "1.0.0", Provenance: built}}}
	u.cand = &npmregistry.Version{Name: "mcp-fixture", Version: "1.1.0"}
	for _, c := range []struct {
		got  *lock.Package
		want []string
	}{
		{nil, []string{"mcp-fixture@1.1.0 comes with no verified provenance", "https://github.com/example/server (workflow .github/workflows/release.yml"}},
		{&lock.Package{Provenance: &other}, []string{"mcp-fixture@1.1.0 was built by https://github.com/someone/fork", "records https://github.com/example/server", "another publisher is refused"}},
	} {
		u.candPkg = c.got
		err := u.checkPublisher()
		for _, want := range c.want {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("checkPublisher: %v, want %q", err, want)
			}
		}
	}
	u.candPkg = &lock.Package{Provenance: built}
	if err := u.checkPublisher(); err != nil {
		t.Errorf("the same publisher: %v", err)
	}
}
