package cgroups

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	containerd "github.com/containerd/cgroups/v3"
	"github.com/containerd/cgroups/v3/cgroup1"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/internal/pathrule"
)

// v1Mounts maps a cgroup v1 controller name to where its hierarchy is mounted.
type v1Mounts map[string]string

// readV1Mounts finds the mounted cgroup v1 hierarchies of this mount namespace.
func readV1Mounts() (v1Mounts, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	mounts := v1Mounts{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		// "id parent maj:min root mountpoint opts [tags] - fstype source superopts"
		pre, post, ok := strings.Cut(s.Text(), " - ")
		if !ok {
			continue
		}
		preFields, postFields := strings.Fields(pre), strings.Fields(post)
		if len(preFields) < 5 || len(postFields) < 3 || postFields[0] != "cgroup" {
			continue
		}
		for _, opt := range strings.Split(postFields[2], ",") {
			if _, seen := mounts[opt]; !seen {
				mounts[opt] = preFields[4]
			}
		}
	}
	return mounts, s.Err()
}

// v1OwnPaths maps each v1 controller to this process's cgroup as seen inside
// the controller's mount: one read of /proc/self/cgroup and of mountinfo,
// where cgroup1.NestedPath reads mountinfo once per controller.
func v1OwnPaths() (map[string]string, error) {
	paths, _, err := containerd.ParseCgroupFileUnified("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	roots, err := v1MountRoots()
	if err != nil {
		return nil, err
	}
	own := map[string]string{}
	for c, p := range paths {
		root, ok := roots[c]
		if !ok {
			continue // not mounted here
		}
		if !pathrule.Within(p, root) {
			continue // outside what this mount shows
		}
		rel, _ := filepath.Rel(root, p)
		own[c] = filepath.Join("/", rel)
	}
	return own, nil
}

// v1MountRoots maps each v1 controller to the root of its mounted hierarchy
// (the cgroup the mount shows as its top, "/" unless bind-mounted).
func v1MountRoots() (map[string]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	roots := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		pre, post, ok := strings.Cut(s.Text(), " - ")
		preFields, postFields := strings.Fields(pre), strings.Fields(post)
		if !ok || len(preFields) < 5 || len(postFields) < 3 || postFields[0] != "cgroup" {
			continue
		}
		for _, opt := range strings.Split(postFields[2], ",") {
			if _, seen := roots[opt]; !seen {
				roots[opt] = preFields[3]
			}
		}
	}
	return roots, s.Err()
}

// v1Path is a cgroup1.Path for group beneath this process's own cgroups.
func v1Path(own map[string]string, group string) cgroup1.Path {
	return func(name cgroup1.Name) (string, error) {
		p, ok := own[string(name)]
		if !ok {
			return "", cgroup1.ErrControllerNotActive
		}
		return filepath.Join(p, group), nil
	}
}

// v1Group is a server's cgroup on cgroup v1: one directory per controller.
type v1Group struct {
	cg   cgroup1.Cgroup
	dirs map[string]string // controller → this cgroup's directory
	lim  Limits
	// oldFreezer is the supervisor's own freezer cgroup, where earlier
	// versions put server cgroups that sweepStale still cleans up.
	oldFreezer string
}

// v1Used lists the controllers a server's v1 cgroup joins: those its limits
// need (missing ones are an error), plus memory and pids for figures where
// they exist. Never freezer: a supervisor that died between freezing and
// thawing would leave the sandbox frozen, immune to SIGKILL, for good
// (signalAll says how it kills without it).
func v1Used(mounts v1Mounts, lim Limits) ([]string, error) {
	required := lim.controllers()
	var missing []string
	for _, c := range required {
		if mounts[c] == "" {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		list := strings.Join(missing, ", ")
		return nil, &limitsError{
			Missing: "cgroup v1 controller " + list + " is not mounted",
			Fix: fmt.Sprintf("mount it (e.g. `mount -t cgroup -o %s cgroup %s/%s`), "+
				"or boot with cgroup v2 (systemd.unified_cgroup_hierarchy=1); %s", missing[0], Mount, missing[0], fixDoctor),
		}
	}
	used := required
	for _, c := range []string{"memory", "pids"} {
		if mounts[c] != "" && !slices.Contains(used, c) {
			used = append(used, c)
		}
	}
	if len(used) == 0 {
		return nil, &limitsError{
			Missing: "neither of the cgroup v1 controllers memory and pids is mounted, so the server's processes could not be tracked",
			Fix:     "mount the memory and pids hierarchies under " + Mount + ", or boot with cgroup v2; " + fixDoctor,
		}
	}
	return used, nil
}

// v1Subsystem builds containerd's controller for c, rooted where c is mounted.
func v1Subsystem(mounts v1Mounts, c string) (cgroup1.Subsystem, error) {
	root := filepath.Dir(mounts[c])
	// containerd addresses a controller as <root>/<name>; co-mounted
	// hierarchies (cpu,cpuacct) are reached through the usual symlink.
	a, errA := os.Stat(filepath.Join(root, c))
	b, errB := os.Stat(mounts[c])
	if errA != nil || errB != nil || !os.SameFile(a, b) {
		return nil, &limitsError{
			Missing: fmt.Sprintf("cgroup v1 controller %s is mounted at %s, not reachable as %s", c, mounts[c], filepath.Join(root, c)),
			Fix:     "mount each controller at " + Mount + "/<controller> (or link it there); " + fixDoctor,
		}
	}
	switch c {
	case "memory":
		return cgroup1.NewMemory(root), nil
	case "pids":
		return cgroup1.NewPids(root), nil
	case "cpu":
		return cgroup1.NewCpu(root), nil
	}
	return nil, fmt.Errorf("cgroups: no v1 controller %q", c)
}

// cfsPeriod is the CPU bandwidth period (µs) for both cgroup versions.
const cfsPeriod = 100000

func cpuQuota(cores float64) int64 { return max(int64(cores*cfsPeriod), 1000) }

// newV1Cgroup creates group beneath the supervisor's own cgroup in each used
// controller and sets lim.
func newV1Cgroup(mounts v1Mounts, group string, lim Limits) (*v1Group, error) {
	used, err := v1Used(mounts, lim)
	if err != nil {
		return nil, err
	}
	ownPaths, err := v1OwnPaths()
	if err != nil {
		return nil, &limitsError{Missing: "cannot read this process's cgroup v1 paths", Fix: fixDoctor, Err: err}
	}
	weighted := lim.CPUWeight > 0 && slices.Contains(used, "cpu")
	if lim.weightOnly() && v1CanJoin(mounts, ownPaths, "cpu") {
		used, weighted = append(used, "cpu"), true
	}
	var subsystems []cgroup1.Subsystem
	for _, c := range used {
		s, err := v1Subsystem(mounts, c)
		if err != nil {
			return nil, err
		}
		subsystems = append(subsystems, s)
	}
	nested := v1Path(ownPaths, group)
	dirs := map[string]string{}
	for _, c := range used {
		p, err := nested(cgroup1.Name(c))
		if err != nil {
			return nil, &limitsError{Missing: "cannot find this process's cgroup v1 " + c + " path", Fix: fixDoctor, Err: err}
		}
		dirs[c] = filepath.Join(filepath.Dir(mounts[c]), c, p)
	}
	ownMemory := ""
	if dirs["memory"] != "" {
		ownMemory = filepath.Dir(dirs["memory"])
	}

	res := &specs.LinuxResources{}
	if lim.Memory > 0 {
		res.Memory = &specs.LinuxMemory{Limit: &lim.Memory}
		switch {
		case fileExists(filepath.Join(ownMemory, "memory.memsw.limit_in_bytes")):
			// memory+swap = memory: no swap at all.
			res.Memory.Swap = &lim.Memory
		case swapActive():
			// No swap accounting (boot option swapaccount=0): a memcg
			// swappiness of 0 keeps its anonymous memory out of swap.
			zero := uint64(0)
			res.Memory.Swappiness = &zero
		}
	}
	if lim.Pids > 0 {
		res.Pids = &specs.LinuxPids{Limit: &lim.Pids}
	}
	if lim.CPU > 0 {
		period, quota := uint64(cfsPeriod), cpuQuota(lim.CPU)
		res.CPU = &specs.LinuxCPU{Period: &period, Quota: &quota}
	}
	if weighted {
		if res.CPU == nil {
			res.CPU = &specs.LinuxCPU{}
		}
		shares := WeightShares(lim.CPUWeight)
		res.CPU.Shares = &shares
	} else {
		lim.CPUWeight = 0
	}

	strict := func(cfg *cgroup1.InitConfig) error {
		// containerd skips a controller it cannot find; a limit that is
		// silently not enforced is what fail-closed forbids.
		cfg.InitCheck = func(s cgroup1.Subsystem, _ cgroup1.Path, err error) error {
			return &limitsError{Missing: "cgroup v1 controller " + string(s.Name()) + " is not active for this process", Fix: fixDoctor, Err: err}
		}
		return nil
	}
	if err := v1MakeDirs(mounts, used, dirs); err != nil {
		return nil, err
	}
	hierarchy := cgroup1.WithHierarchy(func() ([]cgroup1.Subsystem, error) { return subsystems, nil })
	cg, err := cgroup1.New(nested, res, hierarchy, strict)
	if err != nil {
		removeV1Dirs(dirs)
		return nil, creationError(filepath.Dir(dirs[used[0]]), err)
	}
	g := &v1Group{cg: cg, dirs: dirs, lim: lim}
	if p, ok := ownPaths["freezer"]; ok && mounts["freezer"] != "" {
		g.oldFreezer = filepath.Join(mounts["freezer"], p)
	}
	return g, nil
}

func (g *v1Group) path() string {
	for _, c := range []string{"memory", "pids", "cpu"} {
		if d := g.dirs[c]; d != "" {
			return d
		}
	}
	return ""
}

func (g *v1Group) intoFD() int { return -1 }

func (g *v1Group) cpuWeight() uint64 { return g.lim.CPUWeight }

// v1CanJoin reports whether a cgroup can be made beneath this process's own
// in controller c, for what is wanted but not required: c is mounted where
// containerd looks for it and the own cgroup is writable (an unprivileged
// supervisor may have been delegated only some controllers).
func v1CanJoin(mounts v1Mounts, own map[string]string, c string) bool {
	p, ok := own[c]
	if !ok || mounts[c] == "" {
		return false
	}
	if _, err := v1Subsystem(mounts, c); err != nil {
		return false
	}
	return unix.Access(filepath.Join(filepath.Dir(mounts[c]), c, p), unix.W_OK) == nil
}

func (g *v1Group) sweepParents() []string {
	var parents []string
	for _, d := range g.dirs {
		parents = append(parents, filepath.Dir(d))
	}
	if g.oldFreezer != "" {
		parents = append(parents, g.oldFreezer)
	}
	return parents
}

func (g *v1Group) add(pid int) error { return g.cg.AddProc(uint64(pid)) }

// threadJoinFiles are the controllers' tasks files: writing "0" to one moves
// only the writing thread, which spares the kernel's global threadgroup lock
// and its RCU grace period (milliseconds) that a pid written to
// cgroup.procs costs; what that thread forks is born inside.
func (g *v1Group) threadJoinFiles() []string {
	var files []string
	for _, d := range g.dirs {
		files = append(files, filepath.Join(d, "tasks"))
	}
	slices.Sort(files)
	return files
}

func (g *v1Group) oomKills() uint64 {
	if d := g.dirs["memory"]; d != "" {
		return readKey(filepath.Join(d, "memory.oom_control"), "oom_kill")
	}
	return 0
}

func (g *v1Group) pidsMaxHits() uint64 {
	if d := g.dirs["pids"]; d != "" {
		return readKey(filepath.Join(d, "pids.events"), "max")
	}
	return 0
}

// signalAll is v1's substitute for cgroup.kill: SIGKILL every process
// listed. Nothing is frozen first, so nothing can be left frozen. Forks
// racing the listing cannot outrun it: every process here lives in the
// sandbox's own pid namespace, and once its init (listed too, or killed by
// the caller first) dies the kernel forbids forks there and kills the rest.
func (g *v1Group) signalAll() error {
	for _, d := range g.dirs {
		pids, err := readProcs(d)
		if err != nil {
			return err
		}
		if err := killPids(pids); err != nil {
			return err
		}
	}
	return nil
}

func (g *v1Group) empty() (bool, error) {
	for _, d := range g.dirs {
		pids, err := readProcs(d)
		if err != nil {
			return false, err
		}
		if len(pids) > 0 {
			return false, nil
		}
	}
	return true, nil
}

func (g *v1Group) remove() error {
	err := g.cg.Delete()
	if errors.Is(err, cgroup1.ErrCgroupDeleted) {
		return nil
	}
	return err
}

func (g *v1Group) stats() Stats {
	var s Stats
	if d := g.dirs["memory"]; d != "" {
		s.MemoryBytes = readUint(filepath.Join(d, "memory.usage_in_bytes"))
		if g.lim.Memory > 0 {
			s.MemoryLimit = readUint(filepath.Join(d, "memory.limit_in_bytes"))
		}
	}
	if d := g.dirs["pids"]; d != "" {
		s.Pids = readUint(filepath.Join(d, "pids.current"))
		s.PidsLimit = readUint(filepath.Join(d, "pids.max"))
	}
	return s
}
