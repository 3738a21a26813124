package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// hideSystemd runs a command as if on a cgroup v2 machine without systemd
// (a container, a minimal host): in a mount namespace whose /run/systemd
// and /run/dbus are empty, no manager or bus can be reached and systemd
// does not look booted.
var hideSystemd = []string{"unshare", "-m", "--propagation", "private", "sh", "-c",
	`mount -t tmpfs none /run/systemd && mount -t tmpfs none /run/dbus && exec "$@"`, "hide-systemd"}

// TestNoSystemdV2 covers cgroup v2 without systemd: a cgroup that is
// writable and holds only mcpsandbox is used as it is; one shared with
// other programs is refused, with a diagnosis that names the case and the
// fixes, and every host request gets an answer.
func TestNoSystemdV2(t *testing.T) {
	requireGuest(t)
	if os.Geteuid() != 0 {
		t.Skip("hiding systemd needs a mount namespace, so root")
	}
	hostile := testenv.BuildHostile(t)
	run := func(wrap ...string) []string {
		return append(append(wrap, self(t), asCLI, "run", "--memory", "192MiB", "--pids", "48",
			"--restart-backoff", "10ms..1s", "--"), hostile)
	}

	t.Run("own_writable_cgroup_is_used", func(t *testing.T) {
		dir := scratchTopCgroup(t)
		into := []string{"sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, dir}
		rep := runHost(t, hideSystemd, hostSpec{Command: run(into...), Env: hostEnv(), Bombs: true})
		if rep.ConnectError != "" {
			t.Fatalf("the host could not start a session: %s", rep.ConnectError)
		}
		want := strings.TrimPrefix(dir, "/sys/fs/cgroup") + "/mcpsandbox-supervisor"
		if rep.SupervisorCgroup != want {
			t.Errorf("mcpsandbox sits in %s, want %s (its own cgroup's leaf, no scope)", rep.SupervisorCgroup, want)
		}
		checkLimits(t, rep, "201326592", "48")
		checkBombs(t, rep)
		waitUnpopulated(t, dir)
		if left := testenv.ProcessesRunning(hostile); len(left) > 0 {
			t.Errorf("server processes outlived the SIGKILL of mcpsandbox: %v", left)
		}
	})

	t.Run("shared_cgroup_fails_closed", func(t *testing.T) {
		rep := runHost(t, hideSystemd, hostSpec{Command: run(), Env: hostEnv(), Sibling: true})
		if rep.ConnectError == "" {
			t.Fatalf("a session started in a cgroup shared with other programs, with no systemd to ask (mcpsandbox in %s)", rep.SupervisorCgroup)
		}
		for _, want := range []string{"holds processes of other programs", "not reachable",
			"mkdir /sys/fs/cgroup/mcpsandbox", "Delegate=yes"} {
			if !strings.Contains(rep.ConnectError, want) {
				t.Errorf("the host was told %q; want it to say %q", rep.ConnectError, want)
			}
		}
	})
}

// scratchTopCgroup makes a cgroup beneath the root, outside systemd's
// units, and removes it (with whatever mcpsandbox left in it) at cleanup.
func scratchTopCgroup(t *testing.T) string {
	t.Helper()
	dir := fmt.Sprintf("/sys/fs/cgroup/mcpsandbox-test-nosystemd-%d", os.Getpid())
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var dirs []string
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := os.Remove(dirs[i]); err != nil {
				t.Errorf("removing %s: %v", dirs[i], err)
			}
		}
	})
	return dir
}

// waitUnpopulated waits until no process is left anywhere beneath dir.
func waitUnpopulated(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		events, err := os.ReadFile(filepath.Join(dir, "cgroup.events"))
		if err == nil && strings.Contains(string(events), "populated 0") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after SIGKILL of mcpsandbox, %s still holds processes (%s, %v)", dir, events, err)
		}
		time.Sleep(50 * time.Millisecond) // polling the kernel's clean-up
	}
}
