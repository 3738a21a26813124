//go:build linux

package main

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A server may see its own cgroup, read-only: runtimes size themselves from
// its limits. A writable cgroupfs gave the release_agent escape
// (CVE-2022-0492); other cgroups show what else runs and what it may use;
// the rest of sysfs is the host's devices and kernel knobs.

// cgroupWriteTargets are the files of a cgroup directory whose writing
// would move processes, change limits or run a program as root. They are
// only opened, never written.
var cgroupWriteTargets = []string{
	"release_agent", "notify_on_release", "cgroup.procs", "tasks", "cgroup.subtree_control",
	"memory.limit_in_bytes", "memory.max", "pids.max", "cpu.cfs_quota_us", "cpu.max",
}

// ownCgroups reads /proc/self/cgroup: controller → this process's cgroup
// path, "" for the cgroup2 hierarchy, "name=x" for named v1 hierarchies.
func ownCgroups() (map[string]string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	own := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			own[c] = parts[2]
		}
	}
	return own, sc.Err()
}

// ownPathOf finds this process's cgroup in the hierarchy a mount shows.
func ownPathOf(m mount, own map[string]string) (string, bool) {
	if m.fstype == "cgroup2" {
		p, ok := own[""]
		return p, ok
	}
	for _, opt := range strings.Split(m.super, ",") {
		if p, ok := own[opt]; ok {
			return p, true
		}
	}
	return "", false
}

func isCgroupFS(m mount) bool { return m.fstype == "cgroup" || m.fstype == "cgroup2" }

func probeCgroupfs(a *Args, at *attempts) {
	mounts, err := readMountinfo()
	if err != nil {
		at.got("cannot read mountinfo (%v): unverifiable", err)
	}
	own, err := ownCgroups()
	if err != nil {
		at.got("cannot read /proc/self/cgroup (%v): unverifiable", err)
	}
	seen := 0
	for _, m := range mounts {
		if !isCgroupFS(m) {
			continue
		}
		seen++
		if !m.rdonly() {
			at.got("%s at %s is writable (%s)", m.fstype, m.point, m.options)
		}
		if p, ok := ownPathOf(m, own); !ok {
			at.got("%s at %s (%s) is a hierarchy this process is not in", m.fstype, m.point, m.super)
		} else if m.root != p {
			at.got("%s at %s shows cgroup %s, not this process's own %s", m.fstype, m.point, m.root, p)
		}
		otherCgroups(at, m.point)
		for _, name := range cgroupWriteTargets {
			if p := filepath.Join(m.point, name); fileExists(p) {
				tryOpenWrite(at, p)
			}
		}
		child := filepath.Join(m.point, "hostile-child")
		err := os.Mkdir(child, 0o755)
		if err == nil {
			os.Remove(child)
		}
		at.try("create the cgroup "+child, err)
	}
	at.note("%d cgroupfs mounts visible", seen)
	dir, err := scratchDir("cgroup")
	if err != nil {
		at.note("%v", err)
		return
	}
	tryMount(at, "mount cgroup v1 (memory)", "cgroup", dir, "cgroup", 0, "memory")
	tryMount(at, "mount cgroup2", "cgroup2", dir, "cgroup2", 0, "")
}

// otherCgroups: every directory beneath a cgroup mount's top is another
// cgroup (a server cannot have made one in a read-only view).
func otherCgroups(at *attempts, point string) {
	found := 0
	filepath.WalkDir(point, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == point || !d.IsDir() {
			return nil
		}
		if found++; found <= 3 {
			at.got("another cgroup is visible: %s", p)
		}
		return fs.SkipDir
	})
	if found > 3 {
		at.got("%d more cgroups are visible beneath %s", found-3, point)
	}
}

// probeSysOnlyCgroup: /sys may hold nothing but fs/cgroup, read-only, with
// cgroup mounts (and, on cgroup v1, links between them) in it.
func probeSysOnlyCgroup(a *Args, at *attempts) {
	if _, err := os.Lstat("/sys"); err != nil {
		at.note("/sys: %s", errText(err))
		return
	}
	mounts, err := readMountinfo()
	if err != nil {
		at.got("cannot read mountinfo (%v): unverifiable", err)
	}
	cgroupPoints := map[string]bool{}
	for _, m := range mounts {
		switch {
		case m.point != "/sys" && !strings.HasPrefix(m.point, "/sys/"):
		case isCgroupFS(m):
			cgroupPoints[m.point] = true
		case m.point == "/sys" && m.fstype == "tmpfs":
			if !m.rdonly() {
				at.got("/sys is a writable tmpfs (%s)", m.options)
			}
		default:
			at.got("%s mounted at %s", m.fstype, m.point)
		}
	}
	var names []string
	filepath.WalkDir("/sys", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			at.note("walk %s: %s", p, errText(err))
			return nil
		}
		names = append(names, p)
		switch {
		case cgroupPoints[p]:
			return fs.SkipDir
		case d.IsDir() && (p == "/sys" || p == "/sys/fs" || p == "/sys/fs/cgroup"):
		case d.Type()&fs.ModeSymlink != 0 && filepath.Dir(p) == "/sys/fs/cgroup":
			target, err := filepath.EvalSymlinks(p)
			if err != nil || !cgroupPoints[target] {
				at.got("%s links to %s, not to a cgroup view (%v)", p, target, err)
			}
		default:
			at.got("/sys holds %s", p)
			if d.IsDir() {
				return fs.SkipDir
			}
		}
		return nil
	})
	at.note("/sys: %s", strings.Join(names, " "))
	probe := "/sys/hostile-probe"
	err = os.WriteFile(probe, nil, 0o644)
	if err == nil {
		os.Remove(probe)
	}
	at.try("create "+probe, err)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
