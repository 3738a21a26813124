package cgroups

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	containerd "github.com/containerd/cgroups/v3"
	"github.com/containerd/cgroups/v3/cgroup2"
	"golang.org/x/sys/unix"
)

// SupervisorLeaf is the child cgroup the supervisor moves itself into:
// cgroup v2 enables controllers for children only in cgroups without
// processes of their own ("no internal processes").
const SupervisorLeaf = "mcpsandbox-supervisor"

// v2SetupMu serialises moving the supervisor and enabling controllers.
var v2SetupMu sync.Mutex

// v2Group is a server's cgroup on cgroup v2.
type v2Group struct {
	mgr *cgroup2.Manager
	dir string
	fd  int // O_DIRECTORY fd of dir, for CLONE_INTO_CGROUP

	weight uint64 // cpu.weight set, 0 none
}

// ownV2Group reads this process's cgroup v2 path ("0::/a/b").
func ownV2Group() (string, error) {
	_, unified, err := containerd.ParseCgroupFileUnified("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	if unified == "" || !strings.HasPrefix(unified, "/") || strings.Contains(unified, "/..") {
		return "", &limitsError{
			Missing: fmt.Sprintf("this process's cgroup v2 path %q is not usable", unified),
			Fix:     "run mcpsandbox inside the cgroup namespace it was started in; " + fixDoctor,
		}
	}
	return unified, nil
}

// v2Base is the cgroup server cgroups go beneath: the supervisor's own, or
// its parent once the supervisor has moved into its leaf.
func v2Base(own string) string {
	if path.Base(own) == SupervisorLeaf {
		return path.Dir(own)
	}
	return own
}

const fixDelegate = "run mcpsandbox as root, or as a systemd service with Delegate=yes, or under " +
	"`systemd-run --user --scope -p Delegate=yes mcpsandbox ...`, so its cgroup may pass controllers on"

// newV2Cgroup creates group beneath the supervisor's cgroup on the cgroup2
// hierarchy mounted at mountpoint and sets lim.
func newV2Cgroup(mountpoint, group string, lim Limits) (*v2Group, error) {
	v2SetupMu.Lock()
	defer v2SetupMu.Unlock()
	own, err := ownV2Group()
	if err != nil {
		return nil, err
	}
	base := v2Base(own)
	baseDir := filepath.Join(mountpoint, base)
	want := lim.controllers()
	weighted := lim.CPUWeight > 0 && lim.CPU > 0
	if lim.weightOnly() && slices.Contains(readFields(filepath.Join(baseDir, "cgroup.controllers")), "cpu") {
		want, weighted = append(want, "cpu"), true
	}
	if err := v2Delegate(baseDir, want); err != nil {
		return nil, err
	}

	res := &cgroup2.Resources{}
	if lim.Memory > 0 {
		res.Memory = &cgroup2.Memory{Max: &lim.Memory}
	}
	if lim.Pids > 0 {
		res.Pids = &cgroup2.Pids{Max: lim.Pids}
	}
	if lim.CPU > 0 {
		period, quota := uint64(cfsPeriod), cpuQuota(lim.CPU)
		res.CPU = &cgroup2.CPU{Max: cgroup2.NewCPUMax(&quota, &period)}
	}
	weight := uint64(0)
	if weighted {
		if res.CPU == nil {
			res.CPU = &cgroup2.CPU{}
		}
		weight = lim.CPUWeight
		res.CPU.Weight = &weight
	}
	mgr, err := cgroup2.NewManager(mountpoint, path.Join(base, group), res)
	if err != nil {
		return nil, v2Error(baseDir, want, err)
	}
	dir := filepath.Join(baseDir, group)
	fail := func(err error) (*v2Group, error) {
		os.Remove(dir)
		return nil, err
	}
	if lim.Memory > 0 {
		swapMax := filepath.Join(dir, "memory.swap.max")
		switch {
		case fileExists(swapMax):
			if err := os.WriteFile(swapMax, []byte("0"), 0); err != nil {
				return fail(v2Error(baseDir, want, err))
			}
		case swapActive():
			return fail(&limitsError{
				Missing: "swap cannot be turned off for the server: " + swapMax + " is missing (no swap accounting)",
				Fix:     "boot with swapaccount=1, or turn swap off (swapoff -a); " + fixDoctor,
			})
		}
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail(fmt.Errorf("cgroups: opening %s: %w", dir, err))
	}
	return &v2Group{mgr: mgr, dir: dir, fd: fd, weight: weight}, nil
}

// v2Delegate makes sure the controllers in want are enabled for baseDir's
// children, moving the supervisor into its leaf first when baseDir holds it.
func v2Delegate(baseDir string, want []string) error {
	if len(want) == 0 {
		return nil
	}
	available := readFields(filepath.Join(baseDir, "cgroup.controllers"))
	var missing []string
	for _, c := range want {
		if !slices.Contains(available, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return missingV2Controllers(baseDir, missing, available)
	}
	enabled := readFields(filepath.Join(baseDir, "cgroup.subtree_control"))
	if !slices.ContainsFunc(want, func(c string) bool { return !slices.Contains(enabled, c) }) {
		return nil
	}
	// The root cgroup (no cgroup.type) is exempt from the no-internal-processes rule.
	if fileExists(filepath.Join(baseDir, "cgroup.type")) {
		if err := moveSelfToLeaf(baseDir); err != nil {
			return err
		}
	}
	line := "+" + strings.Join(want, " +")
	if err := os.WriteFile(filepath.Join(baseDir, "cgroup.subtree_control"), []byte(line), 0); err != nil {
		return v2Error(baseDir, want, err)
	}
	return nil
}

// moveSelfToLeaf moves the supervisor, and its descendants that share its
// cgroup, out of baseDir into its leaf, so baseDir may enable controllers;
// other programs' processes there block that.
func moveSelfToLeaf(baseDir string) error {
	procs, err := readProcs(baseDir)
	if err != nil {
		return v2Error(baseDir, nil, err)
	}
	mine, others := splitOwnProcesses(procs)
	if len(others) > 0 {
		return &limitsError{
			Missing: fmt.Sprintf("the supervisor's cgroup %s also holds other processes %v, and cgroup v2 "+
				"passes controllers on only from cgroups without processes", baseDir, others),
			Fix: "start mcpsandbox in a cgroup of its own: " + fixDelegate + "; " + fixDoctor,
		}
	}
	if len(procs) == 0 {
		return nil
	}
	leaf := filepath.Join(baseDir, SupervisorLeaf)
	if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return creationError(baseDir, err)
	}
	for _, p := range mine {
		err := os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(strconv.Itoa(p)), 0)
		if err != nil && !(p != os.Getpid() && errors.Is(err, syscall.ESRCH)) {
			return creationError(baseDir, err)
		}
	}
	return nil
}

func missingV2Controllers(baseDir string, missing, available []string) error {
	fix := "the parent cgroup must delegate them: " + fixDelegate
	if containerd.Mode() == containerd.Hybrid {
		fix = "this host binds them to cgroup v1 hierarchies (hybrid mode), where mcpsandbox uses them; " +
			"for cgroup v2 boot with systemd.unified_cgroup_hierarchy=1"
	}
	return &limitsError{
		Missing: fmt.Sprintf("cgroup v2 controller %s not available in %s (it offers: %q)",
			strings.Join(missing, ", "), baseDir, strings.Join(available, " ")),
		Fix: fix + "; " + fixDoctor,
	}
}

// v2Error diagnoses a failure below baseDir. Writing an unavailable
// controller to cgroup.subtree_control fails with a misleading ENOENT.
func v2Error(baseDir string, want []string, err error) error {
	switch {
	case errors.Is(err, syscall.ENOENT) && strings.Contains(err.Error(), "subtree_control"):
		return missingV2Controllers(baseDir, want, readFields(filepath.Join(baseDir, "cgroup.controllers")))
	case errors.Is(err, syscall.EBUSY):
		return &limitsError{
			Missing: "cgroup " + baseDir + " holds processes, so cgroup v2 will not pass controllers on from it",
			Fix:     "start mcpsandbox in a cgroup of its own: " + fixDelegate + "; " + fixDoctor,
			Err:     err,
		}
	}
	return creationError(baseDir, err)
}

func readFields(file string) []string {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	return strings.Fields(string(data))
}

func (g *v2Group) path() string { return g.dir }

func (g *v2Group) sweepParents() []string { return []string{filepath.Dir(g.dir)} }

func (g *v2Group) intoFD() int { return g.fd }

func (g *v2Group) cpuWeight() uint64 { return g.weight }

func (g *v2Group) add(pid int) error { return g.mgr.AddProc(uint64(pid)) }

// threadJoinFiles: none, v2 starts the init stage inside (CLONE_INTO_CGROUP).
func (g *v2Group) threadJoinFiles() []string { return nil }

func (g *v2Group) oomKills() uint64 {
	return readKey(filepath.Join(g.dir, "memory.events"), "oom_kill")
}

func (g *v2Group) pidsMaxHits() uint64 {
	return readKey(filepath.Join(g.dir, "pids.events"), "max")
}

// signalAll uses cgroup.kill (Linux 5.14+), else SIGKILLs every process
// listed, never freezing (v1.go's signalAll says why that suffices).
func (g *v2Group) signalAll() error {
	kill := filepath.Join(g.dir, "cgroup.kill")
	if fileExists(kill) {
		return os.WriteFile(kill, []byte("1"), 0)
	}
	pids, err := g.mgr.Procs(true)
	if err != nil {
		return err
	}
	ints := make([]int, len(pids))
	for i, p := range pids {
		ints[i] = int(p)
	}
	return killPids(ints)
}

func (g *v2Group) empty() (bool, error) {
	data, err := os.ReadFile(filepath.Join(g.dir, "cgroup.events"))
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if line == "populated 0" {
			return true, nil
		}
	}
	return false, nil
}

func (g *v2Group) remove() error {
	if g.fd >= 0 {
		unix.Close(g.fd)
		g.fd = -1
	}
	return g.mgr.Delete()
}

func (g *v2Group) stats() Stats {
	return Stats{
		MemoryBytes: readUint(filepath.Join(g.dir, "memory.current")),
		MemoryLimit: readUint(filepath.Join(g.dir, "memory.max")),
		Pids:        readUint(filepath.Join(g.dir, "pids.current")),
		PidsLimit:   readUint(filepath.Join(g.dir, "pids.max")),
	}
}
