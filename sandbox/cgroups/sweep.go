package cgroups

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// A supervisor that is SIGKILLed cannot remove its servers' cgroups: the
// kernel kills the servers (parent-death signal, pid namespace) but leaves
// the empty directories. The next supervisor sharing that parent cgroup
// removes the ones whose supervisor is gone.

// sweepStale removes sibling cgroups of dirs that an exited
// supervisor left behind. rmdir of a cgroup fails while it holds processes
// or children, so a live server's cgroup is never touched.
func sweepStale(dirs []string) {
	seen := map[string]bool{}
	for _, dir := range dirs {
		parent := filepath.Dir(dir)
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
				os.Remove(filepath.Join(parent, e.Name()))
			}
		}
	}
}

// supervisorGone reports whether no process has pid any more. A reused pid
// keeps the cgroup until a later sweep; that errs on the safe side.
func supervisorGone(pid int) bool {
	return pid != os.Getpid() && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
