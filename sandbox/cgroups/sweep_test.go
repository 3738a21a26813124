package cgroups

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	containerd "github.com/containerd/cgroups/v3"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// Cgroups left by a killed supervisor are cleaned up by the next one: a
// frozen one (as versions that froze to kill left them) is thawed, what is
// inside is killed, and the directories go. A cgroup of a live supervisor,
// and one mcpsandbox did not name, stay with their processes.
func TestSweepCleansUpOnlyCgroupsOfGoneSupervisors(t *testing.T) {
	requireV1(t)
	mounts, err := readV1Mounts()
	if err != nil {
		t.Fatal(err)
	}
	if mounts["freezer"] == "" {
		t.Skip("no v1 freezer here to leave a frozen cgroup in")
	}
	cg, err := New("sweeper", Limits{Pids: 16})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cg.Delete() })
	g := v1Of(t, cg)
	pidsParent, freezerParent := filepath.Dir(g.dirs["pids"]), g.oldFreezer

	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	deadOwner := gone.Process.Pid
	liveOwner := startBlocked(t, exec.Command("sleep", "1000"))

	mk := func(parent, name string) string {
		dir := filepath.Join(parent, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			thaw(dir)
			os.WriteFile(filepath.Join(parent, "cgroup.procs"), nil, 0)
			os.Remove(dir)
		})
		return dir
	}
	// in starts a sleep inside dirs, which it leaves in place; the test's
	// own cgroups get it back at cleanup.
	in := func(dirs ...string) *blockedProcess {
		p := startBlocked(t, exec.Command("sleep", "1000"))
		for _, d := range dirs {
			if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(fmt.Sprint(p.cmd.Process.Pid)), 0); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() {
			for _, parent := range []string{pidsParent, freezerParent} {
				os.WriteFile(filepath.Join(parent, "cgroup.procs"), []byte(fmt.Sprint(p.cmd.Process.Pid)), 0)
			}
		})
		return p
	}
	empty := mk(pidsParent, fmt.Sprintf("mcpsandbox-old-%d-1", deadOwner))
	busyPids := mk(pidsParent, fmt.Sprintf("mcpsandbox-busy-%d-2", deadOwner))
	busyFrozen := mk(freezerParent, fmt.Sprintf("mcpsandbox-busy-%d-2", deadOwner))
	ofLive := mk(pidsParent, fmt.Sprintf("mcpsandbox-other-%d-1", liveOwner.cmd.Process.Pid))
	foreign := mk(pidsParent, fmt.Sprintf("someone-else-%d-1", deadOwner))

	orphan := in(busyPids, busyFrozen)
	if err := os.WriteFile(filepath.Join(busyFrozen, "freezer.state"), []byte("FROZEN"), 0); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the orphan is frozen", func() bool { return readTrim(t, filepath.Join(busyFrozen, "freezer.state")) == "FROZEN" })
	kept := in(ofLive)
	keptForeign := in(foreign)

	sweepStale(g.sweepParents())

	for dir, wantGone := range map[string]bool{empty: true, busyPids: true, busyFrozen: true, ofLive: false, foreign: false, g.dirs["pids"]: false} {
		_, err := os.Stat(dir)
		if isGone := os.IsNotExist(err); isGone != wantGone {
			t.Errorf("%s: removed=%v, want %v", dir, isGone, wantGone)
		}
	}
	if err := orphan.wait(t); !killedBy(err, syscall.SIGKILL) {
		t.Errorf("the process in the frozen cgroup of a gone supervisor ended with %v, want killed", err)
	}
	for _, p := range []*blockedProcess{kept, keptForeign} {
		if err := syscall.Kill(p.cmd.Process.Pid, 0); err != nil {
			t.Errorf("a process of a live supervisor's or a foreign cgroup was killed: %v", err)
		}
	}
}

// On cgroup v2 too: a frozen cgroup (cgroup.freeze) of a gone supervisor is
// thawed, emptied and removed.
func TestSweepV2CleansUpAFrozenCgroupOfAGoneSupervisor(t *testing.T) {
	if containerd.Mode() == containerd.Unified {
		// The supervisor's home moves the test into a leaf; the outer
		// limit's cleanup brings it back for the tests after this one.
		testenv.OuterLimit(t, 256<<20, 64)
	}
	_, g := newV2ForTest(t, "sweeper", Limits{})
	parent := filepath.Dir(g.dir)
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(parent, fmt.Sprintf("mcpsandbox-old-%d-1", gone.Process.Pid))
	if err := os.Mkdir(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.WriteFile(filepath.Join(stale, "cgroup.freeze"), []byte("0"), 0)
		os.WriteFile(filepath.Join(stale, "cgroup.kill"), []byte("1"), 0)
		os.Remove(stale)
	})
	orphan := startBlocked(t, exec.Command("sleep", "1000"))
	if err := os.WriteFile(filepath.Join(stale, "cgroup.procs"), []byte(fmt.Sprint(orphan.cmd.Process.Pid)), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stale, "cgroup.freeze"), []byte("1"), 0); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the orphan is frozen", func() bool { return readKey(filepath.Join(stale, "cgroup.events"), "frozen") == 1 })

	sweepStale(g.sweepParents())

	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the frozen cgroup of a gone supervisor is still there (%v)", err)
	}
	if err := orphan.wait(t); !killedBy(err, syscall.SIGKILL) {
		t.Errorf("the process in it ended with %v, want killed", err)
	}
}
