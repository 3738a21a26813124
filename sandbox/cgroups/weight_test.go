package cgroups

import (
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A weight alone joins the cpu controller and sets cpu.shares, the same
// fraction of v1's default as the weight is of v2's, with no quota; with
// a cap both are set.
func TestCgroupV1WeightWithoutCap(t *testing.T) {
	requireV1(t)
	for _, tc := range []struct {
		lim   Limits
		quota string
	}{
		{Limits{Memory: 64 << 20, Pids: 32, CPUWeight: 25}, "-1"},
		{Limits{Memory: 64 << 20, Pids: 32, CPU: 0.5, CPUWeight: 25}, "50000"},
	} {
		cg, err := New("weight", tc.lim)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cg.Delete() })
		g := v1Of(t, cg)
		if g.dirs["cpu"] == "" {
			t.Fatalf("%+v: no cpu cgroup joined", tc.lim)
		}
		if got := readTrim(t, filepath.Join(g.dirs["cpu"], "cpu.shares")); got != "256" {
			t.Errorf("%+v: cpu.shares = %s, want 256 (a quarter of 1024)", tc.lim, got)
		}
		if got := readTrim(t, filepath.Join(g.dirs["cpu"], "cpu.cfs_quota_us")); got != tc.quota {
			t.Errorf("%+v: cpu.cfs_quota_us = %s, want %s", tc.lim, got, tc.quota)
		}
		if w := cg.CPUWeight(); w != 25 {
			t.Errorf("%+v: CPUWeight() = %d, want 25", tc.lim, w)
		}
	}
	cg, err := New("noweight", Limits{Memory: 64 << 20, Pids: 32})
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Delete()
	if d := v1Of(t, cg).dirs["cpu"]; d != "" || cg.CPUWeight() != 0 {
		t.Errorf("no weight and no cap: joined cpu at %q with weight %d", d, cg.CPUWeight())
	}
}

// An unprivileged supervisor that was delegated every controller but cpu
// still starts servers, without the weight; given cpu, they get it.
func TestCgroupV1UnprivilegedWeightNeedsTheCPUController(t *testing.T) {
	mounts := requireV1Controllers(t)
	if mounts["cpu"] == "" {
		t.Skip("no cpu controller mounted")
	}
	for undelegated, want := range map[string]string{"cpu": "weight 0", "none": "weight 25"} {
		t.Run("without "+undelegated, func(t *testing.T) {
			out, _, _ := v1CreateWithoutLimits(t, mounts, undelegated, "MCPSANDBOX_CGROUP_LIMITS=33554432 16 0 25")
			if !strings.Contains("\n"+out, "\nOK\n"+want+"\n") {
				t.Errorf("role said %q, want OK and %s", out, want)
			}
		})
	}
}

// Not the kernel: a cgroup2 subtree whose parent offers no cpu controller
// gets its other limits and no weight, and is not refused for it.
func TestCgroupV2WeightSkippedWithoutTheCPUController(t *testing.T) {
	requireRoot(t)
	mount, _, group, dir := v2ScratchTree(t, "weight", "memory pids")
	g, err := newV2Cgroup(mount, group, Limits{Memory: 32 << 20, Pids: 16, CPUWeight: 25})
	if err != nil {
		t.Fatalf("refused for a weight the parent cannot give: %v", err)
	}
	t.Cleanup(func() { unix.Close(g.fd) })
	if g.cpuWeight() != 0 || fileExists(filepath.Join(dir, "cpu.weight")) {
		t.Errorf("weight %d, cpu.weight written: %v; want none", g.cpuWeight(), fileExists(filepath.Join(dir, "cpu.weight")))
	}
	if got := readTrim(t, filepath.Join(dir, "pids.max")); got != "16" {
		t.Errorf("pids.max = %s, want 16", got)
	}
}
