package cgroups

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/containerd/cgroups/v3/cgroup1"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// These tests use the real cgroup v1 hierarchies of this host.

func v1Of(t *testing.T, cg *Group) *v1Group {
	t.Helper()
	g, ok := cg.b.(*v1Group)
	if !ok {
		t.Fatalf("expected a cgroup v1 backend, got %T", cg.b)
	}
	return g
}

func TestCgroupV1LimitsProcessesAndCleanup(t *testing.T) {
	requireV1(t)
	lim := Limits{Memory: 64 << 20, Pids: 32, CPU: 0.5}
	cg, err := New("life test/1", lim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cg.Delete() })
	g := v1Of(t, cg)

	// Beneath the supervisor's own cgroup, under a name that says whose it is.
	own, err := cgroup1.ParseCgroupFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"memory", "pids", "cpu"} {
		dir := g.dirs[c]
		if dir == "" {
			t.Fatalf("no %s cgroup created", c)
		}
		want := filepath.Join(Mount, c, own[c]) + "/mcpsandbox-life_test_1-"
		if !strings.HasPrefix(dir, want) {
			t.Errorf("%s cgroup %s is not beneath the supervisor's own (%s...)", c, dir, want)
		}
	}
	if fd := cg.IntoFD(); fd != -1 {
		t.Errorf("IntoFD on v1 = %d, want -1", fd)
	}

	// The limits as the kernel shows them.
	mem := g.dirs["memory"]
	for file, want := range map[string]string{
		filepath.Join(mem, "memory.limit_in_bytes"):       itoa(lim.Memory),
		filepath.Join(g.dirs["pids"], "pids.max"):         itoa(lim.Pids),
		filepath.Join(g.dirs["cpu"], "cpu.cfs_quota_us"):  "50000",
		filepath.Join(g.dirs["cpu"], "cpu.cfs_period_us"): "100000",
		filepath.Join(mem, "memory.memsw.limit_in_bytes"): itoa(lim.Memory), // swap off
	} {
		if strings.Contains(file, "memsw") && !fileExists(file) {
			t.Logf("no swap accounting on this kernel: %s absent", file)
			continue
		}
		if got := readTrim(t, file); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}

	// A shell that starts two children once it is in the cgroup.
	p := startBlocked(t, exec.Command("sh", "-c", "read x; sleep 1000 & sleep 1000 & wait"))
	if err := cg.Add(p.cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	p.release(t)
	if d, ok := g.dirs["freezer"]; ok {
		t.Errorf("the server's cgroup joined the freezer (%s): a supervisor killed while it is frozen leaves it frozen", d)
	}
	for _, c := range []string{"memory", "pids", "cpu"} {
		waitUntil(t, "shell and both children are in the "+c+" cgroup", func() bool {
			return len(procsOf(t, g.dirs[c])) == 3
		})
		if !slices.Contains(procsOf(t, g.dirs[c]), p.cmd.Process.Pid) {
			t.Errorf("shell %d missing from %s cgroup.procs", p.cmd.Process.Pid, c)
		}
	}
	st := cg.Stats()
	if st.Pids != 3 || st.PidsLimit != 32 || st.MemoryLimit != 64<<20 || st.MemoryBytes == 0 {
		t.Errorf("Stats = %+v, want 3 of 32 pids, some memory of a 64 MiB limit", st)
	}

	if err := cg.Kill(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"memory", "pids", "cpu"} {
		if left := procsOf(t, g.dirs[c]); len(left) != 0 {
			t.Errorf("after Kill, %s cgroup still holds %v", c, left)
		}
	}
	if err := p.wait(t); !killedBy(err, syscall.SIGKILL) {
		t.Errorf("shell ended with %v, want killed by SIGKILL", err)
	}
	if cg.OOMKilled() || cg.PidsLimitHit() {
		t.Errorf("OOMKilled=%v PidsLimitHit=%v for a sleeping shell", cg.OOMKilled(), cg.PidsLimitHit())
	}

	if err := cg.Delete(); err != nil {
		t.Fatal(err)
	}
	for c, dir := range g.dirs {
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s cgroup %s still exists after Delete (%v)", c, dir, err)
		}
	}
	if err := cg.Delete(); err != nil {
		t.Errorf("second Delete: %v", err)
	}
	if st := cg.Stats(); st != (Stats{}) {
		t.Errorf("Stats after Delete = %+v, want zero", st)
	}
}

func TestCgroupV1DeleteKillsWhatIsLeft(t *testing.T) {
	requireV1(t)
	cg, err := New("leftover", Limits{Pids: 8})
	if err != nil {
		t.Fatal(err)
	}
	p := startBlocked(t, exec.Command("sleep", "1000"))
	if err := cg.Add(p.cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if err := cg.Delete(); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(t); !killedBy(err, syscall.SIGKILL) {
		t.Errorf("sleep ended with %v, want killed by SIGKILL", err)
	}
	if _, err := os.Stat(v1Of(t, cg).dirs["pids"]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cgroup still exists after Delete (%v)", err)
	}
}

func TestCgroupV1ManyServersCoexist(t *testing.T) {
	requireV1(t)
	a, err := New("same", Limits{Memory: 32 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Delete() })
	b, err := New("same", Limits{Memory: 48 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Delete() })
	da, db := v1Of(t, a).dirs["memory"], v1Of(t, b).dirs["memory"]
	if da == db {
		t.Fatalf("two servers named alike share cgroup %s", da)
	}
	if err := a.Delete(); err != nil {
		t.Fatal(err)
	}
	if got := readTrim(t, filepath.Join(db, "memory.limit_in_bytes")); got != itoa(48<<20) {
		t.Errorf("after deleting its sibling, %s limit = %s", db, got)
	}
}

func TestCgroupV1MemoryHogIsOOMKilled(t *testing.T) {
	requireV1(t)
	testenv.OuterLimit(t, 256<<20, 256)
	cg, err := New("hog", Limits{Memory: 32 << 20, Pids: 64})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cg.Delete() })
	if dir := v1Of(t, cg).dirs["memory"]; !strings.Contains(dir, "/mcpsandbox-test-outer-") {
		t.Fatalf("server cgroup %s is not inside the outer limit", dir)
	}
	p := startBlocked(t, helperCmd(t, os.Args[0], "hog"))
	if err := cg.Add(p.cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if cg.OOMKilled() {
		t.Fatal("OOMKilled before the hog ran")
	}
	p.release(t)
	err = p.wait(t)
	if !killedBy(err, syscall.SIGKILL) {
		t.Fatalf("hog ended with %v, want killed by the OOM killer", err)
	}
	if !cg.OOMKilled() {
		t.Error("OOMKilled() = false after the hog was killed at its 32 MiB limit")
	}
	if err := cg.Delete(); err != nil {
		t.Fatal(err)
	}
	if !cg.OOMKilled() {
		t.Error("OOMKilled() forgot the kill after Delete")
	}
}

func TestCgroupV1ForkLoopHitsPidsLimit(t *testing.T) {
	requireV1(t)
	testenv.OuterLimit(t, 256<<20, 128)
	cg, err := New("forker", Limits{Pids: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cg.Delete() })
	// A bounded fork loop: 32 children against a limit of 8 tasks.
	p := startBlocked(t, exec.Command("sh", "-c",
		`read x; i=0; while [ $i -lt 32 ]; do sleep 1000 & i=$((i+1)); done; wait`))
	if err := cg.Add(p.cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if cg.PidsLimitHit() {
		t.Fatal("PidsLimitHit before the loop ran")
	}
	p.release(t)
	waitUntil(t, "fork fails on the pids limit", cg.PidsLimitHit)
	if st := cg.Stats(); st.Pids > 8 || st.PidsLimit != 8 {
		t.Errorf("Stats = %+v, want at most 8 of 8 pids", st)
	}
	if err := cg.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(t); err == nil {
		t.Error("the forking shell ended cleanly, want killed or failed on fork")
	}
	if !cg.PidsLimitHit() {
		t.Error("PidsLimitHit forgot the hit")
	}
}

func TestCgroupV1MissingControllerIsNamed(t *testing.T) {
	requireV1(t)
	// The controllers are all mounted here, so this takes pids out of the
	// real mount table before handing it over: the absence is simulated.
	mounts, err := readV1Mounts()
	if err != nil {
		t.Fatal(err)
	}
	delete(mounts, "pids")
	_, err = newV1Cgroup(mounts, uniqueName("nopids"), Limits{Memory: 32 << 20, Pids: 16})
	var ce *limitsError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want a limitsError", err)
	}
	for _, want := range []string{"pids is not mounted", "mount -t cgroup -o pids", "mcpsandbox doctor"} {
		if !strings.Contains(asUserSees(err), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestCgroupV1UnprivilegedIsRefusedWithFix(t *testing.T) {
	requireV1(t)
	cmd := helperCmd(t, testenv.SelfForOthers(t), "create", "MCPSANDBOX_CGROUP_LIMITS=33554432 16 0")
	asNobody(cmd)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("role as uid 65534: %v\n%s", err, out)
	}
	msg := string(out)
	for _, want := range []string{"ERR ", "no permission to create a cgroup beneath /sys/fs/cgroup/", "run mcpsandbox as root", "Delegate=yes", "mcpsandbox doctor"} {
		if !strings.Contains(msg, want) {
			t.Errorf("unprivileged New said %q, want it to say %q", msg, want)
		}
	}
}
