package cgroups

import (
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	containerd "github.com/containerd/cgroups/v3"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// On a pure cgroup v2 host (the guest tier) the kernel itself enforces what
// the hybrid host can only have written to a scratch tree: memory.max with
// swap off and an OOM kill counted in memory.events, pids.max with its
// refusals counted in pids.events, cpu.max. Each load is small and runs
// inside an outer limit.
func TestCgroupV2KernelEnforcesTheLimits(t *testing.T) {
	if containerd.Mode() != containerd.Unified {
		t.Skip("needs a pure cgroup v2 host (the guest tier runs it)")
	}
	testenv.OuterLimit(t, 512<<20, 512)
	lim := Limits{Memory: 32 << 20, Pids: 8, CPU: 0.5}
	cg, g := newV2ForTest(t, "kernel", lim)
	for file, want := range map[string]string{
		"memory.max": "33554432", "pids.max": "8", "cpu.max": "50000 100000",
	} {
		if got := readTrim(t, filepath.Join(g.dir, file)); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	if got := readTrim(t, filepath.Join(g.dir, "memory.swap.max")); got != "0" && !(got == "" && !swapActive()) {
		t.Errorf("memory.swap.max = %q, want 0", got)
	}

	inside := func(script string) error {
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: cg.IntoFD()}
		out, err := cmd.CombinedOutput()
		t.Logf("%s: %v %s", script, err, strings.TrimSpace(string(out)))
		return err
	}
	// Forks beyond pids.max fail, and the kernel counts them.
	inside("for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 30 & done; wait")
	if !cg.PidsLimitHit() {
		t.Error("pids.events counts no refused fork after 12 children under pids.max 8")
	}
	if err := cg.Kill(); err != nil {
		t.Fatal(err)
	}
	// A 64 MiB buffer under a 32 MiB limit: the OOM killer ends it.
	err := inside("exec dd if=/dev/zero of=/dev/null bs=64M count=1")
	if !killedBy(err, syscall.SIGKILL) {
		t.Errorf("dd under memory.max 32 MiB ended with %v, want killed by SIGKILL (OOM)", err)
	}
	if !cg.OOMKilled() {
		t.Error("memory.events counts no oom_kill")
	}
	st := cg.Stats()
	if st.MemoryLimit != 32<<20 || st.PidsLimit != 8 {
		t.Errorf("Stats = %+v, want the limits 32 MiB and 8 pids", st)
	}
	if err := cg.Delete(); err != nil {
		t.Fatal(err)
	}
	if !cg.OOMKilled() || !cg.PidsLimitHit() {
		t.Error("the events were forgotten at Delete")
	}
}
