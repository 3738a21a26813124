package launch

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// npxPolicy is what the npx built-in sets for the launch line l: its cache
// in the state directory, installs offline.
func npxPolicy(l Launch) policy.Policy {
	return policy.Policy{State: true, Env: []string{"npm_config_cache=" + filepath.Join(l.StateDir, "npm"), "npm_config_offline=true"}}
}

// npxTree lays out npx's directory for l's specs: its node_modules with the
// package, and its package.json when complete.
func npxTree(t *testing.T, l Launch, complete bool) string {
	t.Helper()
	dir := filepath.Join(l.StateDir, "npm", "_npx", npxHashes(l.line.specs)[0])
	write(t, filepath.Join(dir, "node_modules", "@scope", "srv", "package.json"), `{"name":"@scope/srv"}`, 0o644)
	if complete {
		write(t, filepath.Join(dir, "package.json"), `{"dependencies":{"@scope/srv":"1.0.0"}}`, 0o644)
	}
	return dir
}

func readNpx(t *testing.T) Launch {
	t.Helper()
	dir := t.TempDir()
	h := withEnv(testHost(t, dir), map[string]string{"MCPSANDBOX_STATE_DIR": filepath.Join(dir, "state")})
	return Read([]string{"npx", "-y", "@scope/srv@1.0.0", "--root", "a b"}, builtins(t), h)
}

// An npx server that starts offline is refused until a prepare of its
// specs succeeded, with the command that prepares it; a cache an older
// mcpsandbox filled completely counts as prepared.
func TestUnpreparedNpxServerIsRefusedNamingPrepare(t *testing.T) {
	l := readNpx(t)
	p := npxPolicy(l)
	wantCmd := "`mcpsandbox prepare -- npx -y @scope/srv@1.0.0 --root 'a b'`"

	err := l.Unprepared(p)
	if !errors.Is(err, ErrUnprepared) || !strings.Contains(err.Error(), "were never prepared") || !strings.Contains(err.Error(), wantCmd) {
		t.Fatalf("nothing prepared: %v; want ErrUnprepared naming %s", err, wantCmd)
	}
	dir := npxTree(t, l, false) // what a failed start or prepare left: node_modules, no package.json
	if err := l.Unprepared(p); !errors.Is(err, ErrUnprepared) || !strings.Contains(err.Error(), "not prepared completely") {
		t.Errorf("half-filled: %v; want ErrUnprepared saying so", err)
	}
	npxTree(t, l, true)
	if err := l.Unprepared(p); err != nil {
		t.Errorf("complete, filled by an older mcpsandbox (no marker): %v; want prepared", err)
	}

	// A prepare begins: the half-filled directory goes, the marker too.
	if err := os.Remove(filepath.Join(dir, "package.json")); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(l.StateDir, "npm", "_npx", "0123456789abcdef")
	write(t, filepath.Join(other, "package.json"), "{}", 0o644)
	if err := l.BeginPrepare(p); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("BeginPrepare left the half-filled %s (%v): npx would fail on it with ENOENT", dir, err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("BeginPrepare removed another launch line's complete directory: %v", err)
	}
	// One that a live npx is installing into (it holds its lock) stays.
	busy := filepath.Join(l.StateDir, "npm", "_npx", "fedcba9876543210")
	mkdirs(t, filepath.Join(busy, "concurrency.lock"))
	if err := l.BeginPrepare(p); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(busy); err != nil {
		t.Errorf("BeginPrepare removed a directory a live npx holds the lock of: %v", err)
	}
	// It fails: what it left goes; it succeeds: the marker says so.
	npxTree(t, l, false)
	if err := l.FinishPrepare(p, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) || !errors.Is(l.Unprepared(p), ErrUnprepared) {
		t.Errorf("after a failed prepare: %s %v, Unprepared %v", dir, err, l.Unprepared(p))
	}
	npxTree(t, l, true)
	if err := l.FinishPrepare(p, true); err != nil {
		t.Fatal(err)
	}
	if err := l.Unprepared(p); err != nil {
		t.Errorf("after a prepare that succeeded: %v", err)
	}
	if err := os.Remove(filepath.Join(dir, "package.json")); err != nil {
		t.Fatal(err)
	}
	if err := l.Unprepared(p); !errors.Is(err, ErrUnprepared) {
		t.Errorf("marked, then half-filled by a later start: %v; want refused", err)
	}
}

// Only a launch line that installs offline from its cache in the state
// directory is checked: without state, with npx fetching, or another
// program, nothing is refused.
func TestOfflineCheckOnlyForNpxFromItsStateCache(t *testing.T) {
	l := readNpx(t)
	if check, cmd := l.OfflineCheck(npxPolicy(l)); check == nil || !strings.HasPrefix(cmd, "mcpsandbox prepare -- npx") {
		t.Errorf("npx under the npx policy: no check (%q)", cmd)
	}
	noState := npxPolicy(l)
	noState.State = false
	online := npxPolicy(l)
	online.Env = online.Env[:1]
	elsewhere := npxPolicy(l)
	elsewhere.Env[0] = "npm_config_cache=/root/.npm"
	for name, p := range map[string]policy.Policy{"no state": noState, "npx fetches": online, "cache elsewhere": elsewhere} {
		if check, _ := l.OfflineCheck(p); check != nil {
			t.Errorf("%s: checked, want no check: %v", name, check())
		}
	}
	node := Read([]string{"node", "server.js"}, builtins(t), testHost(t, t.TempDir()))
	if check, _ := node.OfflineCheck(npxPolicy(node)); check != nil {
		t.Errorf("node server.js: checked")
	}
}

// The server owns its state directory: a link it put there leads prepare,
// perhaps root, to remove nothing outside.
func TestBeginPrepareFollowsNoLink(t *testing.T) {
	l := readNpx(t)
	outside := filepath.Join(t.TempDir(), "_npx", "halfdone")
	write(t, filepath.Join(outside, "node_modules", "x"), "", 0o644)
	write(t, filepath.Join(l.StateDir, "npm", ".keep"), "", 0o644)
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(l.StateDir, "npm", "_npx")); err != nil {
		t.Fatal(err)
	}
	if err := l.BeginPrepare(npxPolicy(l)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("BeginPrepare removed %s through a link: %v", outside, err)
	}
}
