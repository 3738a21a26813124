package cgroups

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

// viewControllers are the cgroup v1 controllers shown: those that
// hold the limits runtimes and the demo read (freezer is mcpsandbox's own).
var viewControllers = []string{"memory", "pids", "cpu"}

// ViewDir is one directory of the server's cgroup and its place inside.
type ViewDir struct {
	Name  string   // beneath Mount ("memory", "cpu,cpuacct"); "" = Mount itself (cgroup2)
	Links []string // names linked to Name, as hosts link cpu and cpuacct to cpu,cpuacct
	Dir   string   // the server's cgroup directory on the host
}

// View lists the directories of the server's cgroup to show inside, read-only
// at Mount: the init stage mounts each (ViewDir.Name) and links its Links.
func (c *Group) View() []ViewDir {
	if c == nil {
		return nil
	}
	switch b := c.b.(type) {
	case *v2Group:
		return []ViewDir{{Dir: b.dir}}
	case *v1Group:
		return v1View(b.dirs, Mount)
	}
	return nil
}

// v1View names each controller's directory as the host mounts it:
// cpu co-mounted with cpuacct appears as cpu,cpuacct with both names
// linked to it.
func v1View(dirs map[string]string, root string) []ViewDir {
	var view []ViewDir
	for _, c := range viewControllers {
		dir := dirs[c]
		if dir == "" {
			continue
		}
		name := c
		if target, err := os.Readlink(filepath.Join(root, c)); err == nil &&
			!strings.Contains(target, "/") && slices.Contains(strings.Split(target, ","), c) {
			name = target
		}
		if slices.ContainsFunc(view, func(d ViewDir) bool { return d.Name == name }) {
			continue // co-mounted with a controller already shown
		}
		d := ViewDir{Name: name, Dir: dir}
		if parts := strings.Split(name, ","); len(parts) > 1 {
			d.Links = parts
		}
		view = append(view, d)
	}
	return view
}
