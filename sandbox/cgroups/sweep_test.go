package cgroups

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Cgroups left by a SIGKILLed supervisor are removed by the next one; a
// cgroup of a live supervisor, or one that still holds a process, stays.
func TestSweepRemovesOnlyCgroupsOfGoneSupervisors(t *testing.T) {
	requireV1(t)
	cg, err := New("sweeper", Limits{Pids: 16})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cg.Delete() })
	parent := filepath.Dir(v1Of(t, cg).dirs["pids"])

	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Process.Kill(); live.Wait() })

	mk := func(name string) string {
		dir := filepath.Join(parent, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(dir) })
		return dir
	}
	stale := mk(fmt.Sprintf("mcpsandbox-old-%d-1", gone.Process.Pid))
	ofLive := mk(fmt.Sprintf("mcpsandbox-other-%d-1", live.Process.Pid))
	busy := mk(fmt.Sprintf("mcpsandbox-busy-%d-2", gone.Process.Pid))
	foreign := mk(fmt.Sprintf("someone-else-%d-1", gone.Process.Pid))
	// A process still inside keeps the cgroup, whoever created it.
	if err := os.WriteFile(filepath.Join(busy, "cgroup.procs"), []byte(fmt.Sprint(live.Process.Pid)), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.WriteFile(filepath.Join(parent, "cgroup.procs"), []byte(fmt.Sprint(live.Process.Pid)), 0)
	})

	sweepStale(v1Of(t, cg).allDirs())

	for dir, wantGone := range map[string]bool{stale: true, ofLive: false, busy: false, foreign: false, v1Of(t, cg).dirs["pids"]: false} {
		_, err := os.Stat(dir)
		if isGone := os.IsNotExist(err); isGone != wantGone {
			t.Errorf("%s: removed=%v, want %v", filepath.Base(dir), isGone, wantGone)
		}
	}
}
