package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The server sees its own cgroup, read-only, where runtimes look for it:
// Node sizes V8's heap from memory.max (v1: memory/memory.limit_in_bytes),
// Go ≥1.25 its GOMAXPROCS from cpu.max (v1: cpu/cpu.cfs_quota_us). Without
// it a runtime plans for the host's memory and is OOM-killed instead of
// collecting garbage. /sys holds nothing else: no other cgroup, no sysfs.

// cgroupfsRoot is where cgroups are mounted, on the host and inside.
const cgroupfsRoot = "/sys/fs/cgroup"

// cgroupViewControllers are the cgroup v1 controllers shown: those that
// hold the limits runtimes and the demo read (freezer is mcpsandbox's own).
var cgroupViewControllers = []string{"memory", "pids", "cpu"}

// cgroupDir is one directory of the server's cgroup and its place inside.
type cgroupDir struct {
	Name  string   // beneath /sys/fs/cgroup ("memory", "cpu,cpuacct"); "" = /sys/fs/cgroup itself (cgroup2)
	Links []string // names linked to Name, as hosts link cpu and cpuacct to cpu,cpuacct
	Dir   string   // the server's cgroup directory on the host
}

// cgroupView lists the directories of the server's cgroup to show inside.
func cgroupView(cg *serverCgroup) []cgroupDir {
	if cg == nil {
		return nil
	}
	switch b := cg.b.(type) {
	case *v2Group:
		return []cgroupDir{{Dir: b.dir}}
	case *v1Group:
		return v1CgroupView(b.dirs, cgroupfsRoot)
	}
	return nil
}

// v1CgroupView names each controller's directory as the host mounts it:
// cpu co-mounted with cpuacct appears as cpu,cpuacct with both names
// linked to it.
func v1CgroupView(dirs map[string]string, root string) []cgroupDir {
	var view []cgroupDir
	for _, c := range cgroupViewControllers {
		dir := dirs[c]
		if dir == "" {
			continue
		}
		name := c
		if target, err := os.Readlink(filepath.Join(root, c)); err == nil &&
			!strings.Contains(target, "/") && slices.Contains(strings.Split(target, ","), c) {
			name = target
		}
		if slices.ContainsFunc(view, func(d cgroupDir) bool { return d.Name == name }) {
			continue // co-mounted with a controller already shown
		}
		d := cgroupDir{Name: name, Dir: dir}
		if parts := strings.Split(name, ","); len(parts) > 1 {
			d.Links = parts
		}
		view = append(view, d)
	}
	return view
}
