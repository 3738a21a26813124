package cgroups

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// readUint reads a one-number cgroup file; "max" and v1's "no limit"
// values (near MaxInt64) read as 0, meaning none.
func readUint(path string) uint64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	v, err := strconv.ParseUint(string(bytes.TrimSpace(data)), 10, 64)
	if err != nil || v >= 1<<62 {
		return 0
	}
	return v
}

// readKey reads one "key value" line of a flat-keyed cgroup file
// (memory.events, pids.events, memory.oom_control, cgroup.events).
func readKey(path, key string) uint64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), " ")
		if ok && k == key {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// readProcs lists the processes in a cgroup directory (not its children).
func readProcs(dir string) ([]int, error) {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			return nil, err
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// killPids sends SIGKILL to each pid; ones already gone are fine.
func killPids(pids []int) error {
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return err
		}
	}
	return nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// swapActive reports whether the host has any swap space enabled.
func swapActive() bool {
	data, err := os.ReadFile("/proc/swaps")
	if err != nil {
		return false
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return len(lines) > 1 // the first line is a header
}
