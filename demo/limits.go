package demo

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// cgroupRoot is where a process finds its cgroup's files: its path from
// /proc/self/cgroup beneath the controller's mount (cgroup v1) or beneath
// the cgroup2 mount, as Node (libuv) and Go's runtime look.
const cgroupRoot = "/sys/fs/cgroup"

// CgroupLimits are the limits a process reads from its cgroup: "max" for
// none, "" where it found no such file.
type CgroupLimits struct {
	Memory string   `json:"memory,omitempty"` // bytes
	Pids   string   `json:"pids,omitempty"`
	CPU    string   `json:"cpu,omitempty"` // "quota period", µs
	Files  []string `json:"files,omitempty"`
}

// readCgroupLimits reads memory, pids and CPU limits; procCgroup is the
// content of /proc/self/cgroup. cgroup v2 files come first, then v1.
func readCgroupLimits(procCgroup string) CgroupLimits {
	paths := map[string]string{} // v1 controller → path; "" → cgroup2 path
	for _, line := range strings.Split(procCgroup, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			paths[c] = parts[2]
		}
	}
	var l CgroupLimits
	read := func(controller, file string) (string, bool) {
		p, ok := paths[controller]
		if !ok {
			return "", false
		}
		path := filepath.Join(cgroupRoot, controller, p, file)
		b, err := os.ReadFile(path)
		if err != nil {
			return "", false
		}
		l.Files = append(l.Files, path)
		return strings.TrimSpace(string(b)), true
	}
	if v, ok := read("", "memory.max"); ok {
		l.Memory = v
	} else if v, ok := read("memory", "memory.limit_in_bytes"); ok {
		l.Memory = v
		// cgroup v1 says "no limit" with the largest page-aligned int64.
		if n, err := strconv.ParseUint(v, 10, 64); err == nil && n >= 1<<62 {
			l.Memory = "max"
		}
	}
	if v, ok := read("", "pids.max"); ok {
		l.Pids = v
	} else if v, ok := read("pids", "pids.max"); ok {
		l.Pids = v
	}
	if v, ok := read("", "cpu.max"); ok {
		l.CPU = v
	} else if quota, ok := read("cpu", "cpu.cfs_quota_us"); ok {
		period, _ := read("cpu", "cpu.cfs_period_us")
		if quota == "-1" {
			quota = "max"
		}
		l.CPU = quota + " " + period
	}
	return l
}

// String reads like the policy's flags: "memory 1GiB, pids 256, cpu 0.5 cores".
func (l CgroupLimits) String() string {
	if len(l.Files) == 0 {
		return "none visible"
	}
	memory := noLimit(l.Memory)
	if n, err := strconv.ParseInt(l.Memory, 10, 64); err == nil {
		memory = policy.ByteSize(n).String()
	}
	cpu := noLimit("")
	if quota, period, ok := strings.Cut(l.CPU, " "); ok {
		q, errQ := strconv.ParseFloat(quota, 64)
		p, errP := strconv.ParseFloat(period, 64)
		if errQ == nil && errP == nil && p > 0 {
			cpu = fmt.Sprintf("%g cores", q/p)
		}
	}
	return fmt.Sprintf("memory %s, pids %s, cpu %s", memory, noLimit(l.Pids), cpu)
}

// noLimit names a missing or "max" limit.
func noLimit(v string) string {
	if v == "" || v == "max" {
		return "no limit"
	}
	return v
}
