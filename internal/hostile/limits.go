//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
)

// limitsReport is what the server sees of its own confinement: enough for
// a test to check that the limits it asked for hold from inside.
type limitsReport struct {
	Cgroup     string `json:"cgroup"`     // /proc/self/cgroup
	MemoryMax  string `json:"memory_max"` // cgroup v2 memory.max, or v1 memory.limit_in_bytes
	PidsMax    string `json:"pids_max"`
	Seccomp    string `json:"seccomp"` // 2: a filter
	NoNewPrivs string `json:"no_new_privs"`
	UID        int    `json:"uid"`
}

func limits() limitsReport {
	r := limitsReport{UID: os.Getuid()}
	cg, _ := os.ReadFile("/proc/self/cgroup")
	r.Cgroup = strings.TrimSpace(string(cg))
	r.MemoryMax = firstFile("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
	r.PidsMax = firstFile("/sys/fs/cgroup/pids.max", "/sys/fs/cgroup/pids/pids.max")
	if st, err := procStatus(); err == nil {
		r.Seccomp, r.NoNewPrivs = st["Seccomp"], st["NoNewPrivs"]
	}
	return r
}

// firstFile reads the first of files that exists.
func firstFile(files ...string) string {
	for _, f := range files {
		if data, err := os.ReadFile(filepath.Clean(f)); err == nil {
			return strings.TrimSpace(string(data))
		}
	}
	return ""
}
