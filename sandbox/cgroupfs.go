package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// The server sees its own cgroup, read-only, where runtimes look for it:
// Node sizes V8's heap from memory.max (v1: memory/memory.limit_in_bytes),
// Go ≥1.25 its GOMAXPROCS from cpu.max (v1: cpu/cpu.cfs_quota_us). Without
// it a runtime plans for the host's memory and is OOM-killed instead of
// collecting garbage. /sys holds nothing else: no other cgroup, no sysfs.

// cgroupfsRoot is where cgroups are mounted, on the host and inside.
const cgroupfsRoot = "/sys/fs/cgroup"

// attrCgroup: never writable; noexec too, nothing there is a program.
const attrCgroup = unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC

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

// openCgroupView copies the server's cgroup directories from the host,
// read-only; on error the caller closes the ones returned. The paths are
// the supervisor's own (cgroupfs has no symlinks a server could plant), so
// the administrator's links are followed.
func openCgroupView(view []cgroupDir) ([]hostTree, error) {
	trees := make([]hostTree, 0, len(view))
	for _, d := range view {
		t, err := systemTree(d.Dir, attrCgroup)
		if err != nil {
			return trees, fmt.Errorf("the server's cgroup %s: %v", d.Dir, err)
		}
		trees = append(trees, t)
	}
	return trees, nil
}

// showCgroup copies the server's cgroup directories from the host into a
// new /sys. They come last, once the cgroup exists; a prepared root covers
// stagingDir, so a cgroup beneath it (never a real cgroupfs) is refused.
func showCgroup(view []cgroupDir) error {
	for _, d := range view {
		if within(d.Dir, stagingDir) {
			return fmt.Errorf("the server's cgroup %s lies beneath %s, which the sandbox's root covers while it is built", d.Dir, stagingDir)
		}
	}
	trees, err := openCgroupView(view)
	defer closeTrees(trees)
	if err != nil {
		return err
	}
	return populateSys(view, trees)
}

// populateSys builds /sys: a read-only tmpfs holding only fs/cgroup, with
// the server's cgroup directories (trees, parallel to view) in it.
func populateSys(view []cgroupDir, trees []hostTree) error {
	sys := stagingDir + "/sys"
	if err := os.Mkdir(sys, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", sys, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,nr_inodes=32,mode=0755"); err != nil {
		return err
	}
	sysfd, err := unix.Open(sys, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(sysfd)
	cgfd, err := mkdirAllBeneath(sysfd, components("/fs/cgroup"))
	if err != nil {
		return err
	}
	defer unix.Close(cgfd)
	for i, d := range view {
		if d.Name == "" {
			err = attachTree(trees[i].fd, cgfd) // cgroup2: the whole of /sys/fs/cgroup
		} else {
			err = attachBind(cgfd, "/"+d.Name, trees[i])
		}
		if err != nil {
			return fmt.Errorf("the server's cgroup %s: %v", d.Dir, err)
		}
		for _, l := range d.Links {
			if err := unix.Symlinkat(d.Name, cgfd, l); err != nil {
				return err
			}
		}
	}
	return unix.MountSetattr(sysfd, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY})
}
