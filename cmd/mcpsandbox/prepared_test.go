package main

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// failingInstallPkg is a real package whose install script downloads from
// github.com, as puppeteer's downloads Chrome: under prepare, which
// reaches the registry alone, its install fails.
const failingInstallPkg = "@vscode/ripgrep@1.15.9"

// unpreparedRefusal checks that a start got CodeServerStopped at once
// naming the command that prepares line, and that no server process was
// started (no crash loop).
func unpreparedRefusal(t *testing.T, s *started, line []string) {
	t.Helper()
	want := "`mcpsandbox prepare -- " + strings.Join(line, " ") + "`"
	we, ok := rpcError(s.err)
	if !ok || we.Code != -31102 || !strings.Contains(we.Message, want) {
		t.Fatalf("run after the prepare: initialize got %v, want -31102 naming %s; stderr:\n%s", s.err, want, s.stderr)
	}
	if strings.Contains(s.stderr.String(), `msg="server started"`) {
		t.Errorf("a server process was started from the half-prepared cache; stderr:\n%s", s.stderr)
	}
	if s.took > 10*time.Second {
		t.Errorf("the host waited %s for the refusal, want it at once", s.took)
	}
	t.Logf("refused in %s: %s", s.took, we.Message)
}

// After a prepare that failed (a real package whose install script
// fetches from a host that is not the registry), a run does not install
// offline from what it left and crash-loop without a word: the host's
// initialize is refused at once, naming the prepare command.
func TestRunAfterAFailedPrepareIsRefusedNamingPrepare(t *testing.T) {
	requireConfinement(t)
	testenv.NPMServer(t, "server-memory") // the npm test tier: prepare needs the registry
	b, line := failedPrepare(t)
	unpreparedRefusal(t, b.start(t, append([]string{"--"}, line...)...), line)
}

// The daemon refuses such a server too: a host that connects gets the
// refusal at once, naming the prepare command.
func TestDaemonAfterAFailedPrepareRefusesNamingPrepare(t *testing.T) {
	requireConfinement(t)
	testenv.NPMServer(t, "server-memory")
	b, line := failedPrepare(t)
	d := startE2EDaemon(t, claudeConfig(t, daemonEntry{"ripgrep", map[string]any{"command": line[0], "args": line[1:]}}), b.env)
	m, took, err := host(t, "", b.env, nil, d.connectArgv("ripgrep")...)
	unpreparedRefusal(t, &started{mcpsandbox: m, took: took, err: err}, line)
	if strings.Contains(d.log(), `msg="server started"`) {
		t.Errorf("the daemon started the server from the half-prepared cache; its log:\n%s", d.log())
	}
}

// failedPrepare runs a prepare that fails, in a state base of the test's
// own, and returns the base and the launch line.
func failedPrepare(t *testing.T) (*stateBase, []string) {
	t.Helper()
	b := newStateBase(t)
	line := []string{"npx", "-y", failingInstallPkg}
	if out, err := cliIn(t, "", b.env, append([]string{"prepare", "--"}, line...)...); err == nil {
		t.Fatalf("prepare of %s succeeded; the test needs its install to fail:\n%s", failingInstallPkg, out)
	}
	return b, line
}

// A start that leaves npx's directory with node_modules and no
// package.json (as a failed install once did) made every later prepare
// fail with `npm error enoent` until it was removed by hand: prepare now
// clears it and is redone, and meanwhile run refuses the server at once.
// A cache filled by an older mcpsandbox, with no record of its prepare,
// still starts.
func TestPrepareIsRedoneOverAHalfFilledCache(t *testing.T) {
	requireConfinement(t)
	testenv.NPMServer(t, "server-memory")
	b := newStateBase(t)
	line := []string{"npx", "-y", memoryPkg}
	b.prepare(t, line...)
	state := b.stateDirs(t)
	if len(state) != 1 {
		t.Fatalf("state directories: %q, want one", state)
	}

	// As an older mcpsandbox left it: no record of the prepare.
	if err := os.RemoveAll(filepath.Join(state[0], ".mcpsandbox-prepared")); err != nil {
		t.Fatal(err)
	}
	s := b.mustStart(t, append([]string{"--"}, line...)...)
	if !s.toolNames(t)["create_entities"] {
		t.Errorf("a cache filled by an older mcpsandbox: no create_entities tool")
	}
	s.stop()

	npxDirs, _ := filepath.Glob(filepath.Join(state[0], "npm", "_npx", "*", "package.json"))
	if len(npxDirs) != 1 {
		t.Fatalf("npx's directories with a package.json: %q, want one", npxDirs)
	}
	if err := os.Remove(npxDirs[0]); err != nil {
		t.Fatal(err)
	}
	unpreparedRefusal(t, b.start(t, append([]string{"--"}, line...)...), line)

	b.prepare(t, line...)
	s = b.mustStart(t, append([]string{"--"}, line...)...)
	names := s.toolNames(t)
	if !names["create_entities"] {
		t.Errorf("prepared again: tools %v, want create_entities among them", slices.Sorted(maps.Keys(names)))
	}
	s.stop()
}
