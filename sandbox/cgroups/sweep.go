package cgroups

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// A supervisor that is SIGKILLed cannot remove its servers' cgroups: the
// kernel kills the servers (the init stage's parent-death signal ends its
// pid namespace) but leaves the empty directories. Versions that froze a
// cgroup to kill it could also leave it FROZEN, its processes immune to
// SIGKILL and the sandbox's init stuck reaping them. The next supervisor
// sharing that parent cgroup cleans up after the ones that are gone.

// sweepStale cleans up the cgroups in parents that an exited supervisor
// left behind: thawed, emptied, removed. Only names made by uniqueName
// whose supervisor is gone are touched, so a live server is never killed.
func sweepStale(parents []string) {
	seen := map[string]bool{}
	var stale []string
	for _, parent := range parents {
		if seen[parent] {
			continue
		}
		seen[parent] = true
		entries, err := os.ReadDir(parent)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if pid, ok := ownerPid(e.Name()); ok && e.IsDir() && supervisorGone(pid) {
				stale = append(stale, filepath.Join(parent, e.Name()))
			}
		}
	}
	// All thawed first: a v1 process frozen in one hierarchy does not die
	// of the SIGKILL sent while emptying its cgroup in another.
	for _, dir := range stale {
		eachDeepestFirst(dir, thaw)
	}
	for _, dir := range stale {
		eachDeepestFirst(dir, removeStale)
	}
}

// eachDeepestFirst calls f on dir and every directory beneath it, children
// before their parent.
func eachDeepestFirst(dir string, f func(string)) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			eachDeepestFirst(filepath.Join(dir, e.Name()), f)
		}
	}
	f(dir)
}

// removeStale kills what dir holds and removes it. A process it may not
// kill (another user's) keeps the cgroup.
func removeStale(dir string) {
	deadline := time.Now().Add(killTimeout)
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		pids, err := readProcs(dir)
		if err != nil || len(pids) == 0 {
			break
		}
		if killPids(pids) != nil || time.Now().After(deadline) {
			return
		}
		time.Sleep(pause) // killed processes take a moment to leave
	}
	syscall.Rmdir(dir)
}

// thaw lets a frozen cgroup's processes run, and so die of SIGKILL: v1's
// freezer and v2's cgroup.freeze hold them until then.
func thaw(dir string) {
	if file := filepath.Join(dir, "freezer.state"); fileExists(file) {
		os.WriteFile(file, []byte("THAWED"), 0)
	}
	if file := filepath.Join(dir, "cgroup.freeze"); fileExists(file) {
		os.WriteFile(file, []byte("0"), 0)
	}
}

// supervisorGone reports whether no process has pid any more. A reused pid
// keeps the cgroup until a later sweep; that errs on the safe side.
func supervisorGone(pid int) bool {
	return pid != os.Getpid() && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
