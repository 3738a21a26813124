//go:build linux

package main

import (
	"os"
	"slices"
	"strings"
)

// probeMountInfo reads what the kernel tells the server of its mounts
// (/proc/self/mountinfo, mounts, mountstats) and lists the host's facts
// there: each file system that is the host's, with its device and
// options (a bind shows its source's superblock), each mount whose
// source path is not where it shows, and every mount of the host's
// devtmpfs, whose options give the host's RAM (size is half of it).
// Those are noted; what gets through is a devtmpfs mount outside
// DevtmpfsAllowed (the sandbox makes its own device nodes where it can)
// and any of HostFacts, the host's words the test says must not show.
func probeMountInfo(a *Args, at *attempts) {
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		at.note("read /proc/self/mountinfo: %s", errText(err))
		return
	}
	for _, line := range strings.Split(strings.TrimSpace(string(mi)), "\n") {
		f := strings.Fields(line)
		dash := slices.Index(f, "-")
		if len(f) < 7 || dash < 6 || dash+3 > len(f) {
			at.got("/proc/self/mountinfo: a line this probe cannot read: %q", line)
			continue
		}
		root, point, fstype, source := f[3], f[4], f[dash+1], f[dash+2]
		opts := ""
		if dash+3 < len(f) {
			opts = f[dash+3]
		}
		switch {
		case fstype == "devtmpfs" && !slices.Contains(a.DevtmpfsAllowed, point):
			at.got("%s is the host's devtmpfs (%s)", point, opts)
		case fstype == "devtmpfs":
			at.note("%s is the host's devtmpfs (%s)", point, opts)
		case strings.HasPrefix(source, "/dev/"):
			at.note("%s is on the host's %s %s (%s)", point, fstype, source, opts)
		}
		if root != "/" && root != point && fstype != "proc" && !strings.HasSuffix(root, "//deleted") {
			at.note("%s comes from %s of its file system", point, root)
		}
	}
	for _, p := range []string{"/proc/self/mountinfo", "/proc/self/mounts", "/proc/self/mountstats"} {
		data, err := os.ReadFile(p)
		if err != nil {
			at.note("read %s: %s", p, errText(err))
			continue
		}
		for _, fact := range a.HostFacts {
			if fact != "" && strings.Contains(string(data), fact) {
				at.got("%s shows the host's %q", p, fact)
			}
		}
	}
}
