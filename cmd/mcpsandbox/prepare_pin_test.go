package main

import (
	"fmt"
	"net/http/httptest"
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
	"github.com/mcpsandbox/mcpsandbox/npmregistry"
	"github.com/mcpsandbox/mcpsandbox/provenance/provenancetest"
)

// prepare resolves an npx line's package on the registry before npx
// installs it, checks it, and records it in the lock; run refuses a cache
// that holds another tarball than the lock pins. The registry is the
// test's own, on the test network, signing as npm's does.

const (
	pinPkg      = "fixture-pin"
	pinID       = "npm+" + pinPkg
	pinMCPName  = "io.github.good/fixture-pin"
	registryURL = "http://" + testnet.RegistryName + "/"
)

// pinRegistry is a registry with pinPkg at 1.0.0 and 1.1.0 (latest), both
// published ten days ago, on a fresh test network.
func pinRegistry(t *testing.T) (*testnet.Env, *testregistry.Registry, map[string]string) {
	t.Helper()
	requireConfinement(t)
	if testing.Short() {
		t.Skip("-short: prepare runs npm confined")
	}
	e := testnet.Start(t, testnet.Options{})
	reg := testregistry.New(t)
	integrity := map[string]string{}
	for _, v := range []string{"1.0.0", "1.1.0"} {
		integrity[v] = reg.Publish(pinPackage(v, time.Now().Add(-240*time.Hour)))
	}
	e.AddHost(testnet.RegistryName, testnet.RegistryAddr, 80, reg)
	return e, reg, integrity
}

func pinPackage(version string, published time.Time) testregistry.Package {
	return testregistry.Package{Name: pinPkg, Version: version, Published: published, Files: map[string]string{
		"package.json": fmt.Sprintf(`{"name": %q, "version": %q, "mcpName": %q, "bin": {%q: "index.js"}}`, pinPkg, version, pinMCPName, pinPkg),
		"index.js":     pinServer,
	}}
}

// pinServer is the package's program: an MCP server of no tools, so that
// a host's session with it starts.
const pinServer = `#!/usr/bin/env node
require("readline").createInterface({input: process.stdin}).on("line", line => {
  const m = JSON.parse(line)
  if (m.id === undefined) return
  const result = m.method === "initialize"
    ? {protocolVersion: m.params.protocolVersion, capabilities: {tools: {}}, serverInfo: {name: "fixture-pin", version: "1"}}
    : m.method === "tools/list" ? {tools: []} : {}
  process.stdout.write(JSON.stringify({jsonrpc: "2.0", id: m.id, result}) + "\n")
})
`

// lockEntry is the lock's package of pinPkg, nil when it has none.
func lockEntry(t *testing.T, path string) *lock.Package {
	t.Helper()
	f, err := lock.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if s := f.Servers[pinID]; s != nil {
		return s.Package
	}
	return nil
}

// A floating line is resolved to the registry's latest, logged, installed
// and recorded; the next prepare of a line that resolves to another
// version is refused naming both and the fixes, and a start from a cache
// that holds another tarball than the lock pins is refused at once.
func TestPrepareResolvesAndPinsTheExactVersion(t *testing.T) {
	e, reg, integrity := pinRegistry(t)
	b := newStateBase(t, "npm_config_registry="+registryURL)
	lockFile := b.lock

	out, stderr, code := runIn(t, e, "/", b.env, "prepare", "--", "npx", "-y", pinPkg)
	if code != exitOK || !strings.HasPrefix(out, "prepared "+pinPkg+"@1.1.0 in ") {
		t.Fatalf("prepare -- npx -y %s: exit %d, want 0 and %q\n%s%s", pinPkg, code, "prepared "+pinPkg+"@1.1.0 in", out, stderr)
	}
	for _, want := range []string{`msg="mcpsandbox: prepare resolved the package" spec=` + pinPkg + ` version=1.1.0 integrity="` + integrity["1.1.0"] + `"`,
		`msg="mcpsandbox: ` + pinPkg + `@1.1.0: the registry's signature verifies"`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("prepare's log does not say %q:\n%s", want, stderr)
		}
	}
	got := lockEntry(t, lockFile)
	if got == nil || got.Name != pinPkg || got.Version != "1.1.0" || got.Integrity != integrity["1.1.0"] || got.Registry != registryURL ||
		got.MCPName != pinMCPName || got.Published.IsZero() || len(got.InstallHosts) != 0 || got.Provenance != nil {
		t.Fatalf("the lock's %s: %+v; want 1.1.0, its integrity, the registry, its mcpName and publish time, no install hosts", pinID, got)
	}
	t.Logf("the lock:\n%s", readFile(t, lockFile))

	// The registry moves on: the same floating line now resolves to 1.2.0.
	reg.Publish(pinPackage("1.2.0", time.Now().Add(-100*time.Hour)))
	_, stderr, code = runIn(t, e, "/", b.env, "prepare", "--", "npx", "-y", pinPkg)
	want := fmt.Sprintf("mcpsandbox prepare: %s resolves to 1.2.0 (sha512-", pinPkg)
	wantPin := fmt.Sprintf("but the lock %s pins 1.1.0 (%s): prepare the pinned version with mcpsandbox prepare -- npx -y %s@1.1.0, or review and take 1.2.0 with mcpsandbox upgrade %s --to 1.2.0",
		lockFile, integrity["1.1.0"], pinPkg, pinPkg)
	if last := lastLineOf(stderr); code != exitFailure || !strings.HasPrefix(last, want) || !strings.HasSuffix(last, wantPin) {
		t.Errorf("prepare after the registry moved: exit %d, last line %q; want 1 and %q ... %q\n%s", code, last, want, wantPin, stderr)
	}
	if got := lockEntry(t, lockFile); got.Version != "1.1.0" {
		t.Errorf("the refused prepare changed the lock: %+v", got)
	}

	// A cache that holds another tarball than the lock pins is refused at
	// start, naming both: the lock is made to pin 1.0.0.
	if err := lock.Update(lockFile, func(f *lock.File) error {
		f.Servers[pinID].Package.Version, f.Servers[pinID].Package.Integrity = "1.0.0", integrity["1.0.0"]
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s := b.start(t, "--", "npx", "-y", pinPkg)
	defer s.stop()
	we, ok := rpcError(s.err)
	wantStart := fmt.Sprintf("the installed %s is 1.1.0 (%s), but the lock %s pins 1.0.0 (%s)", pinPkg, integrity["1.1.0"], lockFile, integrity["1.0.0"])
	if !ok || we.Code != -31102 || !strings.Contains(we.Message, wantStart) || !strings.Contains(we.Message, "mcpsandbox prepare -- npx -y "+pinPkg+"@1.0.0") {
		t.Fatalf("run from a cache the lock does not pin: initialize got %v; want -31102 saying %q and naming the prepare of 1.0.0\n%s", s.err, wantStart, s.stderr)
	}
	if strings.Contains(s.stderr.String(), `msg="server started"`) {
		t.Errorf("the server was started from a cache the lock does not pin")
	}
	t.Logf("refused at start: %s", we.Message)

	// A daemon refuses it too, by the lock beside its config, read when a
	// host first connects.
	d := startE2EDaemon(t, claudeConfig(t, daemonEntry{"pin", map[string]any{"command": "npx", "args": []string{"-y", pinPkg}}}), b.env)
	daemonLock := lock.BesideConfig(d.config)
	if err := os.WriteFile(daemonLock, readFile(t, lockFile), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := host(t, "", b.env, nil, d.connectArgv("pin")...)
	wantDaemon := fmt.Sprintf("the installed %s is 1.1.0 (%s), but the lock %s pins 1.0.0 (%s)", pinPkg, integrity["1.1.0"], daemonLock, integrity["1.0.0"])
	if we, ok := rpcError(err); !ok || we.Code != -31102 || !strings.Contains(we.Message, wantDaemon) {
		t.Errorf("the daemon's server from a cache its lock does not pin: initialize got %v; want -31102 saying %q", err, wantDaemon)
	}
}

// A version whose registry signature is forged, or whose tarball is not
// the one its integrity names, is refused before npx installs anything,
// naming what failed; neither enters the lock.
func TestPrepareRefusesATamperedPackage(t *testing.T) {
	e, reg, integrity := pinRegistry(t)
	b := newStateBase(t, "npm_config_registry="+registryURL)
	lockFile := b.lock

	reg.ForgeSignature(pinPkg, "1.0.0")
	_, stderr, code := runIn(t, e, "/", b.env, "prepare", "--", "npx", "-y", pinPkg+"@1.0.0")
	if last := lastLineOf(stderr); code != exitFailure || !strings.HasPrefix(last, "mcpsandbox prepare: "+pinPkg+"@1.0.0: ") || !strings.Contains(last, "signature") {
		t.Errorf("a forged signature: exit %d, last line %q; want 1, naming the version and its signature\n%s", code, last, stderr)
	}
	if strings.Contains(stderr, "npm ") {
		t.Errorf("npm ran for a version whose signature is forged:\n%s", stderr)
	}

	reg.TamperTarball(pinPkg, "1.1.0")
	_, stderr, code = runIn(t, e, "/", b.env, "prepare", "--", "npx", "-y", pinPkg+"@1.1.0")
	if last := lastLineOf(stderr); code != exitFailure || !strings.HasPrefix(last, "mcpsandbox prepare: "+pinPkg+"@1.1.0 from "+registryURL) || !strings.Contains(last, "not the published "+integrity["1.1.0"]) || !strings.HasSuffix(last, "; refused") {
		t.Errorf("a tampered tarball: exit %d, last line %q; want 1, naming the version, the registry and the integrity published\n%s", code, last, stderr)
	}
	if strings.Contains(stderr, "npm ") {
		t.Errorf("npm ran for a version whose tarball is tampered with:\n%s", stderr)
	}
	if got := lockEntry(t, lockFile); got != nil {
		t.Errorf("the lock records %+v after two refused prepares", got)
	}
}

// The first prepare of a version younger than the cooldown warns, in one
// line naming its age, the cooldown and how to override it; a registry
// that serves no keys is said to be unverified, never verified. The next
// prepare of the pinned version does not warn again.
func TestPrepareWarnsOfAYoungVersionOnce(t *testing.T) {
	e, reg, _ := pinRegistry(t)
	reg.ServeNoKeys()
	reg.Publish(pinPackage("2.0.0", time.Now().Add(-3*time.Hour)))
	b := newStateBase(t, "npm_config_registry="+registryURL)

	out, stderr, code := runIn(t, e, "/", b.env, "prepare", "--", "npx", "-y", pinPkg)
	if code != exitOK || !strings.HasPrefix(out, "prepared "+pinPkg+"@2.0.0 in ") {
		t.Fatalf("prepare: exit %d\n%s%s", code, out, stderr)
	}
	want := "mcpsandbox prepare: warning: " + pinPkg + "@2.0.0 was published 3h ago, less than the cooldown of 48h: "
	if n := strings.Count(stderr, "warning: "); n != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "pass --cooldown 0 (pins.cooldown)") {
		t.Errorf("the first prepare of a version 3h old: %d warnings; want one saying %q ... --cooldown 0\n%s", n, want, stderr)
	}
	if !strings.Contains(stderr, `msg="mcpsandbox: `+pinPkg+`@2.0.0 not verified: the registry serves no signatures"`) || strings.Contains(stderr, "signature verifies") {
		t.Errorf("a registry with no keys: the log does not say the version is not verified:\n%s", stderr)
	}

	_, stderr, code = runIn(t, e, "/", b.env, "prepare", "--", "npx", "-y", pinPkg+"@2.0.0")
	if code != exitOK || strings.Contains(stderr, "warning: ") {
		t.Errorf("prepare of the version the lock pins: exit %d; want 0 and no warning\n%s", code, stderr)
	}
}

// wrap writes the exact version a floating entry resolves to into the
// host's file (--dry-run shows it first), prepares that line, and leaves
// every other byte of the file as it was: the wrapped line then starts
// offline from what was prepared.
func TestWrapWritesTheExactVersion(t *testing.T) {
	e, _, integrity := pinRegistry(t)
	home, env := frictionHome(t)
	base := newStateBase(t)
	env = append(env, "npm_config_registry="+registryURL, "MCPSANDBOX_STATE_DIR="+base.dir)
	file := filepath.Join(home, ".cursor", "mcp.json")
	orig := `{
  // the pinned one
  "mcpServers": {
    "pin": {"command": "npx", "args": ["-y", "` + pinPkg + `"], "env": {}},
    "other": {"url": "http://192.0.2.1/mcp"}
  }
}
`
	writeTree(t, home, map[string]string{".cursor/mcp.json": orig})

	out, stderr, code := runIn(t, e, home, env, "wrap", "--dry-run", "--command", wrapTestCommand, file)
	wantNote := "  pin: npx -y " + pinPkg + " is " + pinPkg + "@1.1.0 now: the file names that version, which prepare installs and the lock pins\n"
	if code != exitOK || !strings.Contains(out, wantNote) || !strings.Contains(out, `+    "pin": {"command": "`+wrapTestCommand+`", "args": ["run", "--", "npx", "-y", "`+pinPkg+`@1.1.0"], "env": {}},`) {
		t.Fatalf("wrap --dry-run: exit %d; want the note %q and the exact version in the diff\n%s%s", code, wantNote, out, stderr)
	}
	if got := string(readFile(t, file)); got != orig {
		t.Fatalf("wrap --dry-run wrote the file:\n%s", got)
	}

	out, stderr, code = runIn(t, e, home, env, "wrap", "--command", wrapTestCommand, file)
	if code != exitOK || !strings.Contains(out, wantNote) {
		t.Fatalf("wrap: exit %d\n%s%s", code, out, stderr)
	}
	want := strings.Replace(orig, `{"command": "npx", "args": ["-y", "`+pinPkg+`"]`, `{"command": "`+wrapTestCommand+`", "args": ["run", "--", "npx", "-y", "`+pinPkg+`@1.1.0"]`, 1)
	if got := string(readFile(t, file)); got != want {
		t.Errorf("the host's file after wrap:\n%s\nwant, byte for byte:\n%s", got, want)
	}
	if got := lockEntry(t, filepath.Join(home, "..", "lock.json")); got == nil || got.Version != "1.1.0" || got.Integrity != integrity["1.1.0"] {
		t.Errorf("the lock's %s after wrap: %+v; want 1.1.0", pinID, got)
	}
	// wrap --daemon writes the exact version into the daemon's file, and
	// pins into the lock beside it.
	other := filepath.Join(home, "other.json")
	daemonConfig := filepath.Join(home, "daemon.json")
	writeTree(t, home, map[string]string{"other.json": orig})
	out, stderr, code = runIn(t, e, home, env, "wrap", "--daemon", "--daemon-config", daemonConfig, "--command", wrapTestCommand, other)
	if code != exitOK || !strings.Contains(out, wantNote) {
		t.Fatalf("wrap --daemon: exit %d\n%s%s", code, out, stderr)
	}
	if e := entriesOf(t, readFile(t, daemonConfig))["pin"]; !slices.Equal(e.Args, []string{"-y", pinPkg + "@1.1.0"}) {
		t.Errorf("the daemon's entry after wrap --daemon: %s; want the exact version", e.Raw)
	}
	if got := lockEntry(t, lock.BesideConfig(daemonConfig)); got == nil || got.Version != "1.1.0" {
		t.Errorf("the lock beside the daemon's config after wrap --daemon: %+v; want 1.1.0", got)
	}

	// npm offline finds the packument it cached under the registry's URL.
	s := (&stateBase{dir: base.dir, env: env}).start(t, "--env", "npm_config_registry", "--", "npx", "-y", pinPkg+"@1.1.0")
	defer s.stop()
	if s.err != nil {
		t.Errorf("the wrapped line does not start from what wrap prepared: %v\n%s", s.err, s.stderr)
	}
}

// Where the registry serves a version's provenance, prepare verifies it
// (through mcpsandbox-provenance, against the test's own Sigstore) and
// records who built it; the same version then served with provenance from
// another repository is refused, naming both publishers.
func TestPrepareVerifiesProvenanceAndRefusesAnotherPublisher(t *testing.T) {
	e, reg, _ := pinRegistry(t)
	verifier := filepath.Join(testenv.SharedDir(t, "mcpsandbox-provenance-"), "mcpsandbox-provenance")
	build := exec.Command("go", "build", "-o", verifier, "./cmd/mcpsandbox-provenance")
	build.Dir = testenv.RepoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building mcpsandbox-provenance: %v\n%s", err, out)
	}
	sigstore := provenancetest.New(t)
	root := filepath.Join(t.TempDir(), "trusted_root.json")
	if err := os.WriteFile(root, sigstore.TrustedRootJSON(), 0o644); err != nil {
		t.Fatal(err)
	}
	get := httptest.NewRecorder()
	reg.ServeHTTP(get, httptest.NewRequest("GET", "/"+pinPkg+"/-/"+pinPkg+"-1.1.0.tgz", nil))
	tarball := get.Body.Bytes()
	reg.AddAttestation(pinPkg, "1.1.0", npmregistry.ProvenancePredicate, sigstore.MakeBundle(pinPkg, "1.1.0", tarball, provenancetest.Good))
	b := newStateBase(t, "npm_config_registry="+registryURL, "MCPSANDBOX_PROVENANCE="+verifier, "MCPSANDBOX_SIGSTORE_ROOT="+root)
	line := []string{"prepare", "--", "npx", "-y", pinPkg + "@1.1.0"}

	out, stderr, code := runIn(t, e, "/", b.env, line...)
	if code != exitOK || !strings.Contains(stderr, `msg="mcpsandbox: `+pinPkg+`@1.1.0: provenance verified" repository=`+provenancetest.Good.Repository) {
		t.Fatalf("prepare of a version with provenance: exit %d; want 0 and its provenance verified\n%s%s", code, out, stderr)
	}
	good := provenancetest.Good
	if got := lockEntry(t, b.lock); got == nil || got.Provenance == nil ||
		*got.Provenance != (lock.Provenance{Issuer: good.Issuer, Repository: good.Repository, Workflow: good.Workflow, Commit: good.Commit}) {
		t.Fatalf("the lock's %s: %+v; want the provenance of %+v", pinID, got, good)
	}

	evil := good
	evil.Repository = "https://github.com/someone-else/server"
	reg.AddAttestation(pinPkg, "1.1.0", npmregistry.ProvenancePredicate, sigstore.MakeBundle(pinPkg, "1.1.0", tarball, evil))
	_, stderr, code = runIn(t, e, "/", b.env, line...)
	want := fmt.Sprintf("mcpsandbox prepare: %s@1.1.0 was built by %s (workflow %s, issuer %s), but the lock %s pins %s (workflow %s, issuer %s): a version from another publisher is refused",
		pinPkg, evil.Repository, evil.Workflow, evil.Issuer, b.lock, good.Repository, good.Workflow, good.Issuer)
	if last := lastLineOf(stderr); code != exitFailure || last != want {
		t.Errorf("prepare of the version built elsewhere: exit %d, last line\n%q\nwant 1 and\n%q\n%s", code, last, want, stderr)
	}

	// With no verifier to be found, a version whose provenance the
	// registry serves is refused (fail closed), unless the check is
	// turned off, loudly.
	bare := newStateBase(t, "npm_config_registry="+registryURL, "PATH=/usr/bin:/bin")
	_, stderr, code = runIn(t, e, "/", bare.env, line...)
	if last := lastLineOf(stderr); code != exitFailure || !strings.Contains(last, "its provenance cannot be verified: mcpsandbox-provenance, which verifies it, was found neither") || !strings.Contains(last, "MCPSANDBOX_PROVENANCE=off") {
		t.Errorf("prepare with no verifier: exit %d, last line %q; want 1, naming the verifier and the opt-out\n%s", code, last, stderr)
	}
	off := newStateBase(t, "npm_config_registry="+registryURL, "PATH=/usr/bin:/bin", "MCPSANDBOX_PROVENANCE=off")
	if _, stderr, code = runIn(t, e, "/", off.env, line...); code != exitOK || !strings.Contains(stderr, "PROVENANCE NOT VERIFIED though the registry serves it") {
		t.Errorf("prepare with MCPSANDBOX_PROVENANCE=off: exit %d; want 0 and a loud warning\n%s", code, stderr)
	}
}

// A prepare whose lock cannot be written fails, naming it, and leaves no
// cache marked prepared: run refuses the server rather than start the
// package with no pin.
func TestPrepareThatCannotRecordThePinLeavesNothingToStart(t *testing.T) {
	e, _, _ := pinRegistry(t)
	b := newStateBase(t, "npm_config_registry="+registryURL)
	// The lock reads as empty, but its update cannot take its flock.
	if err := os.Mkdir(b.lock+".lck", 0o755); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runIn(t, e, "/", b.env, "prepare", "--", "npx", "-y", pinPkg+"@1.1.0")
	if last := lastLineOf(stderr); code != exitFailure || !strings.HasPrefix(last, "mcpsandbox prepare: recording "+pinPkg+"@1.1.0 in the lock: ") {
		t.Fatalf("prepare with a lock it cannot write: exit %d, last line %q; want 1, naming the lock\n%s", code, last, stderr)
	}
	s := b.start(t, "--", "npx", "-y", pinPkg+"@1.1.0")
	defer s.stop()
	if we, ok := rpcError(s.err); !ok || we.Code != -31102 || !strings.Contains(we.Message, "mcpsandbox prepare -- npx -y "+pinPkg+"@1.1.0") {
		t.Errorf("run after a prepare that recorded no pin: initialize got %v; want -31102 naming the prepare\n%s", s.err, s.stderr)
	}
	if strings.Contains(s.stderr.String(), `msg="server started"`) {
		t.Errorf("the server started from a prepare whose pin was never recorded")
	}
}
