package cgroups

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	containerd "github.com/containerd/cgroups/v3"
	"golang.org/x/sys/unix"
)

// cgroup v2 on this host: the hybrid layout mounts cgroup2 at
// /sys/fs/cgroup/unified with no memory, pids or cpu controller (they are
// bound to v1), so these tests run the v2 code against the real unified
// hierarchy as far as it goes: creating a cgroup, CLONE_INTO_CGROUP through
// IntoFD, cgroup.kill, removal, the no-internal-processes rule (shown with
// hugetlb, the one controller v2 offers here) and the refusal when memory
// and pids are missing. What could NOT run for real here: the kernel
// enforcing memory.max / pids.max / cpu.max, memory.swap.max, and OOM and
// pids events in memory.events / pids.events. For those, the limit files
// the code writes are checked in a scratch directory standing in for the
// cgroup filesystem (TestCgroupV2LimitFilesInScratchTree).

const hybridUnified = Mount + "/unified"

func requireHybrid(t *testing.T) {
	t.Helper()
	requireRoot(t)
	if containerd.Mode() != containerd.Hybrid {
		t.Skip("these tests use the controller-less cgroup2 hierarchy of a hybrid host")
	}
}

// v2TestMount is the cgroup2 hierarchy the generic v2 tests use: the
// controller-less one of a hybrid host (as root), or /sys/fs/cgroup on a pure
// v2 host, where they run for real (the guest tier, in a delegated scope).
func v2TestMount(t *testing.T) string {
	t.Helper()
	if containerd.Mode() == containerd.Unified {
		return Mount
	}
	requireHybrid(t)
	return hybridUnified
}

func newV2ForTest(t *testing.T, name string, lim Limits) (*Group, *v2Group) {
	t.Helper()
	if containerd.Mode() == containerd.Unified {
		// As run does: a home first, where the supervisor may delegate.
		if h := v2Home(Mount, "test"); h.Err != nil {
			t.Fatal(h.Err)
		}
	}
	g, err := newV2Cgroup(v2TestMount(t), uniqueName(name), lim)
	if err != nil {
		t.Fatal(err)
	}
	cg := &Group{b: g}
	t.Cleanup(func() { cg.Delete() })
	return cg, g
}

// scratchV2 makes an empty cgroup under the unified root for a test.
func scratchV2(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(hybridUnified, fmt.Sprintf("mcpsandbox-test-%s-%d", name, os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("-hugetlb"), 0)
		os.Remove(filepath.Join(dir, SupervisorLeaf))
		if err := os.Remove(dir); err != nil {
			t.Errorf("removing scratch cgroup: %v", err)
		}
	})
	return dir
}

func TestCgroupV2IntoFDStartsChildInsideAndKillEmptiesIt(t *testing.T) {
	mount := v2TestMount(t)
	cg, g := newV2ForTest(t, "into", Limits{})
	own, err := ownV2Group()
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(g.dir) != filepath.Join(mount, v2Base(own)) {
		t.Errorf("cgroup %s is not beneath the supervisor's own %s", g.dir, own)
	}
	fd := cg.IntoFD()
	if fd < 0 {
		t.Fatalf("IntoFD = %d on cgroup v2", fd)
	}

	cmd := exec.Command("sh", "-c", "sleep 1000 & sleep 1000 & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	p := startBlocked(t, cmd) // not blocked: it is born in the cgroup
	pid := p.cmd.Process.Pid
	line := ""
	for _, l := range strings.Split(readTrim(t, fmt.Sprintf("/proc/%d/cgroup", pid)), "\n") {
		if strings.HasPrefix(l, "0::") {
			line = l
		}
	}
	if want := "0::" + strings.TrimPrefix(g.dir, mount); line != want {
		t.Errorf("child born in %q, want %q", line, want)
	}
	waitUntil(t, "shell and both children are in the cgroup", func() bool { return len(procsOf(t, g.dir)) == 3 })

	if !fileExists(filepath.Join(g.dir, "cgroup.kill")) {
		t.Fatal("no cgroup.kill on this kernel: the freeze fallback would be used")
	}
	if err := cg.Kill(); err != nil {
		t.Fatal(err)
	}
	if left := procsOf(t, g.dir); len(left) != 0 {
		t.Errorf("after Kill the cgroup still holds %v", left)
	}
	if err := p.wait(t); !killedBy(err, syscall.SIGKILL) {
		t.Errorf("shell ended with %v, want killed by SIGKILL", err)
	}
	if err := cg.Delete(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(g.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cgroup still exists after Delete (%v)", err)
	}
	if g.fd != -1 {
		t.Error("Delete left the IntoFD descriptor open")
	}
}

func TestCgroupV2AddMovesARunningProcess(t *testing.T) {
	v2TestMount(t)
	cg, g := newV2ForTest(t, "add", Limits{})
	p := startBlocked(t, exec.Command("sleep", "1000"))
	if err := cg.Add(p.cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if got := procsOf(t, g.dir); len(got) != 1 || got[0] != p.cmd.Process.Pid {
		t.Errorf("cgroup.procs = %v, want [%d]", got, p.cmd.Process.Pid)
	}
	if err := cg.Delete(); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(t); !killedBy(err, syscall.SIGKILL) {
		t.Errorf("sleep ended with %v, want killed by SIGKILL", err)
	}
}

func TestCgroupV2MissingControllersAreNamed(t *testing.T) {
	requireHybrid(t)
	group := uniqueName("nov2")
	_, err := newV2Cgroup(hybridUnified, group, Limits{Memory: 32 << 20, Pids: 16})
	var ce *limitsError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want a limitsError", err)
	}
	for _, want := range []string{"cgroup v2 controller memory, pids not available in " + hybridUnified, "cgroup v1", "mcpsandbox doctor"} {
		if !strings.Contains(asUserSees(err), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(hybridUnified, group)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused cgroup was left behind (%v)", err)
	}

	// The kernel's own answer to enabling a missing controller is a bare
	// ENOENT on cgroup.subtree_control; it must come out as the diagnosis.
	werr := os.WriteFile(filepath.Join(hybridUnified, "cgroup.subtree_control"), []byte("+memory"), 0)
	if !errors.Is(werr, syscall.ENOENT) {
		t.Fatalf("enabling memory on the unified root: %v, want ENOENT", werr)
	}
	diag := v2Error(hybridUnified, []string{"memory"}, werr)
	if !strings.Contains(diag.Error(), "cgroup v2 controller memory not available") {
		t.Errorf("ENOENT became %q", diag)
	}
}

// roleV2Leaf plays a supervisor started in a cgroup of its own
// (MCPSANDBOX_CGROUP_SCRATCH): enabling a controller for children fails
// while it lives there, and works once it moved into its leaf.
func roleV2Leaf() error {
	scratch := os.Getenv("MCPSANDBOX_CGROUP_SCRATCH")
	if err := os.WriteFile(filepath.Join(scratch, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
		return err
	}
	subtree := filepath.Join(scratch, "cgroup.subtree_control")
	werr := os.WriteFile(subtree, []byte("+hugetlb"), 0)
	fmt.Printf("before=%v\n", v2Error(scratch, []string{"hugetlb"}, werr))
	if err := moveSelfToLeaf(scratch); err != nil {
		return err
	}
	own, err := ownV2Group()
	if err != nil {
		return err
	}
	fmt.Printf("own=%s\nbase=%s\n", own, v2Base(own))
	fmt.Printf("after=%v\n", os.WriteFile(subtree, []byte("+hugetlb"), 0))
	return nil
}

func TestCgroupV2SupervisorMovesIntoLeaf(t *testing.T) {
	requireHybrid(t)
	// hugetlb must reach scratch: enable it on the unified root for the
	// test (the root is exempt from the rule), and switch it off after.
	rootSubtree := filepath.Join(hybridUnified, "cgroup.subtree_control")
	if !strings.Contains(readTrim(t, rootSubtree), "hugetlb") {
		if err := os.WriteFile(rootSubtree, []byte("+hugetlb"), 0); err != nil {
			t.Fatalf("enabling hugetlb on the unified root: %v", err)
		}
		t.Cleanup(func() { os.WriteFile(rootSubtree, []byte("-hugetlb"), 0) })
	}
	scratch := scratchV2(t, "leaf")
	out, err := helperCmd(t, os.Args[0], "v2leaf", "MCPSANDBOX_CGROUP_SCRATCH="+scratch).CombinedOutput()
	if err != nil {
		t.Fatalf("role: %v\n%s", err, out)
	}
	rel := strings.TrimPrefix(scratch, hybridUnified)
	for _, want := range []string{
		"before=cgroups: cannot enforce limits: cgroup " + scratch + " holds processes",
		"own=" + rel + "/" + SupervisorLeaf + "\n",
		"base=" + rel + "\n",
		"after=<nil>\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("role output lacks %q:\n%s", want, out)
		}
	}
}

func TestCgroupV2OtherProcessesBlockDelegation(t *testing.T) {
	requireHybrid(t)
	scratch := scratchV2(t, "others")
	other := startOrphan(t)
	if err := os.WriteFile(filepath.Join(scratch, "cgroup.procs"), []byte(strconv.Itoa(other)), 0); err != nil {
		t.Fatal(err)
	}
	err := moveSelfToLeaf(scratch)
	for _, want := range []string{fmt.Sprintf("also holds other processes [%d]", other), "Delegate=yes"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want it to say %q", err, want)
		}
	}
	if fileExists(filepath.Join(scratch, SupervisorLeaf)) {
		t.Error("a leaf was made although delegation is impossible")
	}
}

// The supervisor's own children in its cgroup are its own: they move into
// the leaf with it, and nothing else is touched.
func TestCgroupV2OwnChildrenMoveIntoTheLeaf(t *testing.T) {
	requireHybrid(t)
	scratch := scratchV2(t, "children")
	child := startBlocked(t, exec.Command("sleep", "1000"))
	pid := child.cmd.Process.Pid
	if err := os.WriteFile(filepath.Join(scratch, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		t.Fatal(err)
	}
	if mine, others := splitOwnProcesses([]int{pid, 1}); len(mine) != 1 || mine[0] != pid || len(others) != 1 || others[0] != 1 {
		t.Errorf("splitOwnProcesses([%d 1]) = %v, %v; want [%d], [1]", pid, mine, others, pid)
	}
	if err := moveSelfToLeaf(scratch); err != nil {
		t.Fatal(err)
	}
	leafProcs, err := readProcs(filepath.Join(scratch, SupervisorLeaf))
	if err != nil || len(leafProcs) != 1 || leafProcs[0] != pid {
		t.Errorf("leaf holds %v (%v), want the child %d alone (this test process never joined scratch)", leafProcs, err, pid)
	}
	// Move the child out again, so the scratch cgroups can be removed.
	if err := os.WriteFile(filepath.Join(hybridUnified, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		t.Fatal(err)
	}
}

// startOrphan starts a process that is not a descendant of this one (its
// parent exits at once), and kills it at cleanup.
func startOrphan(t *testing.T) int {
	t.Helper()
	out, err := exec.Command("/bin/sh", "-c", "sleep 1000 >/dev/null 2>&1 </dev/null & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		defer unix.Close(pidfd)
		unix.PidfdSendSignal(pidfd, unix.SIGKILL, nil, 0)
		// Its cgroup can be removed only once it has exited; a pidfd
		// becomes readable then, even for a process that is not a child.
		fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
		if n, err := unix.Poll(fds, 10000); n != 1 {
			t.Errorf("the orphan %d did not exit after SIGKILL (%v)", pid, err)
		}
	})
	return pid
}

// Not the kernel: a scratch directory laid out like a delegated cgroup2
// subtree, to read back the limit files the v2 code writes, and to feed it
// the event counters this host's v2 hierarchy cannot produce.
func TestCgroupV2LimitFilesInScratchTree(t *testing.T) {
	// containerd creates missing limit files with mode 0: only root reads them back.
	requireRoot(t)
	mount, base, group, dir := v2ScratchTree(t, "files", "cpu memory pids")
	// Ancestors between the mount and base take "+controller" writes too.
	for d := base; d != mount; d = filepath.Dir(d) {
		os.WriteFile(filepath.Join(filepath.Dir(d), "cgroup.subtree_control"), nil, 0o644)
	}

	g, err := newV2Cgroup(mount, group, Limits{Memory: 32 << 20, Pids: 16, CPU: 1.5, CPUWeight: 25})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(g.fd) })
	for file, want := range map[string]string{
		"memory.max":      "33554432",
		"memory.swap.max": "0",
		"pids.max":        "16",
		"cpu.max":         "150000 100000",
		"cpu.weight":      "25",
	} {
		if got := readTrim(t, filepath.Join(dir, file)); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}

	cg := &Group{b: g}
	if cg.OOMKilled() || cg.PidsLimitHit() {
		t.Fatal("events reported before any counter exists")
	}
	for file, content := range map[string]string{
		"memory.events":  "low 0\nhigh 0\nmax 7\noom 1\noom_kill 1\n",
		"pids.events":    "max 3\n",
		"memory.current": "1048576\n",
		"pids.current":   "5\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !cg.OOMKilled() || !cg.PidsLimitHit() {
		t.Errorf("OOMKilled=%v PidsLimitHit=%v with oom_kill 1 and max 3", cg.OOMKilled(), cg.PidsLimitHit())
	}
	want := Stats{MemoryBytes: 1 << 20, MemoryLimit: 32 << 20, Pids: 5, PidsLimit: 16}
	if st := cg.Stats(); st != want {
		t.Errorf("Stats = %+v, want %+v", st, want)
	}
}

// v2ScratchTree lays out, under a temporary mount, this process's own
// cgroup2 path as base offering controllers, and an empty group below it
// named after prefix; it returns the mount, base, group name and its dir.
func v2ScratchTree(t *testing.T, prefix, controllers string) (mount, base, group, dir string) {
	t.Helper()
	mount = t.TempDir()
	own, err := ownV2Group()
	if err != nil {
		t.Fatal(err)
	}
	base = filepath.Join(mount, v2Base(own))
	group = uniqueName(prefix)
	dir = filepath.Join(base, group)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for file, content := range map[string]string{
		filepath.Join(base, "cgroup.controllers"):     controllers,
		filepath.Join(base, "cgroup.subtree_control"): controllers,
		filepath.Join(dir, "memory.swap.max"):         "max",
	} {
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return mount, base, group, dir
}
