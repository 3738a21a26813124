package sandbox

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// What /proc/self/mountinfo shows a server of the host (README, "What
// /proc shows"): as root the sandbox makes its own device nodes, so no
// mount of the host's devtmpfs (whose size is half the host's RAM) shows;
// in a user namespace mknod is refused, and only the five device nodes
// bound from the host's devtmpfs show it. The host's block device and its
// options behind /usr and the grants show everywhere: a bind mount keeps
// its source's superblock, whose device name and options mountinfo prints.

// escapeDevNodes are where a sandbox in a user namespace binds the host's
// device nodes.
var escapeDevNodes = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// escapeMountFacts adds to args what mountinfo_host_facts must not find:
// as root, the host devtmpfs's options (its size) anywhere.
func escapeMountFacts(t *testing.T, args map[string]any) {
	if os.Geteuid() != 0 {
		args["devtmpfs_allowed"] = escapeDevNodes
		return
	}
	if opts := escapeDevtmpfsOptions(t); opts != "" {
		args["host_facts"] = []string{opts}
	}
}

// escapeDevtmpfsOptions is the super block options of the host's
// devtmpfs ("" if it has none mounted), as mountinfo prints them.
func escapeDevtmpfsOptions(t *testing.T) string {
	mi, err := os.ReadFile("/proc/self/mountinfo")
	escapeMust(t, err)
	for _, line := range strings.Split(string(mi), "\n") {
		f := strings.Fields(line)
		if i := slices.Index(f, "-"); i > 0 && i+3 < len(f) && f[i+1] == "devtmpfs" {
			return f[i+3]
		}
	}
	return ""
}
