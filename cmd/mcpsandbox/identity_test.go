package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// requireRootConfinement: these tests are about the uid a root
// mcpsandbox gives each server.
func requireRootConfinement(t *testing.T) {
	t.Helper()
	if testing.Short() || os.Geteuid() != 0 {
		t.Skip("a uid of its own per server is root's (not under -short)")
	}
}

// startOnce runs `mcpsandbox run -- npx -y pkg` with the host gone at
// once: the server's state directory is made (owned by its uid) and the
// session ends. npm_config_offline=false: an unprepared server offline is
// refused before its sandbox (and state directory) is made; the server
// fetches nothing here, its host being gone. It returns the log.
func (b *stateBase) startOnce(t *testing.T, pkg string) string {
	t.Helper()
	cmd := exec.Command(self(t), asCLI, "run", "--restart", "never", "--env", "npm_config_offline=false", "--", "npx", "-y", pkg)
	cmd.Env = b.env
	out, _ := cmd.CombinedOutput() // it fails: nothing was prepared
	return string(out)
}

// ownerOf is the uid owning path, or fails the test.
func ownerOf(t *testing.T, path string) uint32 {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Uid
}

// Packages named alike in other scopes (@playwright/mcp, @stripe/mcp) are
// other servers: each gets a state directory and a uid of its own.
func TestScopedPackagesNamedAlikeGetTheirOwnStateAndUID(t *testing.T) {
	requireRootConfinement(t)
	b := newStateBase(t)
	b.startOnce(t, "@mcpsandbox-test-a/mcp")
	b.startOnce(t, "@mcpsandbox-test-b/mcp@1.0.0")
	a, bb := filepath.Join(b.dir, "npm+@mcpsandbox-test-a+mcp"), filepath.Join(b.dir, "npm+@mcpsandbox-test-b+mcp")
	dirs := b.stateDirs(t)
	if len(dirs) != 2 || dirs[0] != a || dirs[1] != bb {
		t.Fatalf("state directories %q; want %s and %s", dirs, a, bb)
	}
	if ua, ub := ownerOf(t, a), ownerOf(t, bb); ua == ub || ua == 0 || ub == 0 {
		t.Errorf("the two servers' state directories are owned by uids %d and %d; want two uids of their own", ua, ub)
	}
}

// formerState makes the state directory an earlier mcpsandbox gave a
// server under its former name, as a start of it left it: owned by the
// uid of that directory, holding an npm cache whose npx installs name
// pkgs, and a file of the server's.
func (b *stateBase) formerState(t *testing.T, name string, pkgs ...string) string {
	t.Helper()
	dir := filepath.Join(b.dir, name)
	script := "set -e; cd " + dir + "; echo kept > notes"
	for i, p := range pkgs {
		h := "npm/_npx/h" + string(rune('0'+i))
		script += "; mkdir -p " + h + "; echo '{\"dependencies\":{\"" + p + "\":\"^1.0.0\"}}' > " + h + "/package.json"
	}
	p := policy.Default()
	p.Command, p.State = []string{"/bin/sh", "-c", script}, true
	ex, err := supervisor.RunOnce(context.Background(), supervisor.Options{Name: name, Policy: p, StateDir: dir}, io.Discard)
	if err != nil || ex.Failed() {
		t.Fatalf("making the former state directory %s: %v %v", dir, ex, err)
	}
	return dir
}

// A state directory from before names kept the npm scope moves to the
// server's own name, with its uid, when its cache names only this server;
// one that several servers shared stays where it is, said once in the log.
func TestFormerStateDirectoryMovesOrStays(t *testing.T) {
	requireRootConfinement(t)
	b := newStateBase(t)
	former := b.formerState(t, "server-memory", "@modelcontextprotocol/server-memory")
	uid := ownerOf(t, former)
	log := b.startOnce(t, "@modelcontextprotocol/server-memory@2026.1.26")
	moved := filepath.Join(b.dir, "npm+@modelcontextprotocol+server-memory")
	if !strings.Contains(log, "state directory was moved") || !strings.Contains(log, "from="+former) {
		t.Errorf("the log does not say %s was moved:\n%s", former, log)
	}
	if _, err := os.Lstat(former); !os.IsNotExist(err) {
		t.Errorf("%s is still there (%v)", former, err)
	}
	if got := ownerOf(t, moved); got != uid {
		t.Errorf("%s is owned by uid %d; want the server's own, %d", moved, got, uid)
	}
	if data, err := os.ReadFile(filepath.Join(moved, "notes")); err != nil || string(data) != "kept\n" {
		t.Errorf("the server's file did not move along: %q (%v)", data, err)
	}

	shared := b.formerState(t, "mcp", "@mcpsandbox-test-a/mcp", "@mcpsandbox-test-b/mcp")
	log = b.startOnce(t, "@mcpsandbox-test-a/mcp")
	for _, want := range []string{"is left where it is", "left=" + shared, "other servers too (@mcpsandbox-test-b/mcp)"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log of a start beside a shared former directory lacks %q:\n%s", want, log)
		}
	}
	if ownerOf(t, shared) == ownerOf(t, filepath.Join(b.dir, "npm+@mcpsandbox-test-a+mcp")) {
		t.Errorf("the server got the shared directory's uid")
	}
	if log = b.startOnce(t, "@mcpsandbox-test-a/mcp"); strings.Contains(log, "left where it is") {
		t.Errorf("the second start says again what the first said:\n%s", log)
	}
}
