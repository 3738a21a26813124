package sandbox

// PLACEHOLDER owned by the cgroup work: replaced by cgroup*.go.

import "errors"

type cgroupLimits struct {
	Memory int64   // bytes, 0 = none; swap is always off
	Pids   int64   // 0 = none
	CPU    float64 // cores, 0 = none
}

// serverCgroup is one server's cgroup, beneath the supervisor's own.
type serverCgroup struct{}

// newServerCgroup creates the cgroup and sets its limits, or fails with a
// message naming what is missing and how to fix it.
func newServerCgroup(name string, lim cgroupLimits) (*serverCgroup, error) {
	return nil, errors.New("cgroups: not built yet")
}

// IntoFD returns an fd for CLONE_INTO_CGROUP (cgroup v2) or -1 (v1: use Add).
func (c *serverCgroup) IntoFD() int { return -1 }

// Add moves pid (and its threads) into the cgroup.
func (c *serverCgroup) Add(pid int) error { return errors.New("cgroups: not built yet") }

// OOMKilled reports whether the kernel's OOM killer has acted in the cgroup.
func (c *serverCgroup) OOMKilled() bool { return false }

// PidsLimitHit reports whether fork failed on the pids limit.
func (c *serverCgroup) PidsLimitHit() bool { return false }

// Kill kills every process in the cgroup and waits until it is empty.
func (c *serverCgroup) Kill() error { return nil }

// Delete kills what is left and removes the cgroup.
func (c *serverCgroup) Delete() error { return nil }

// Stats reads current memory and pids use and limits.
func (c *serverCgroup) Stats() Stats { return Stats{} }
