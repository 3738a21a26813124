package cgroups

import (
	"fmt"
	"sync"
	"time"

	containerd "github.com/containerd/cgroups/v3"
)

// Group is one server's cgroup, beneath the supervisor's own.
type Group struct {
	mu      sync.Mutex
	b       backend
	oom     bool
	pidsHit bool
	deleted bool
	swept   chan struct{} // closed when New's sweep of stale cgroups is done
}

// New creates the cgroup and sets its limits, or fails with a
// message naming what is missing and how to fix it.
func New(name string, lim Limits) (*Group, error) {
	if lim.Memory < 0 || lim.Pids < 0 || lim.CPU < 0 {
		return nil, fmt.Errorf("cgroups: negative limit %+v", lim)
	}
	if lim.CPUWeight > 10000 {
		return nil, fmt.Errorf("cgroups: CPU weight %d is past cgroup v2's 10000", lim.CPUWeight)
	}
	if err := live.begin(); err != nil {
		return nil, err
	}
	defer live.making.Done()
	group := uniqueName(name)
	var (
		b   backend
		err error
	)
	switch containerd.Mode() {
	case containerd.Unified:
		if h := v2Home(Mount, name); h.Err != nil {
			return nil, h.Err
		}
		b, err = newV2Cgroup(Mount, group, lim)
	case containerd.Legacy, containerd.Hybrid:
		var mounts v1Mounts
		mounts, err = readV1Mounts()
		if err == nil {
			b, err = newV1Cgroup(mounts, group, lim)
		}
	default:
		err = &limitsError{
			Missing: "no cgroup filesystem is mounted at " + Mount,
			Fix:     "mount cgroup2 at " + Mount + " (or run on a host that has it); " + fixDoctor,
		}
	}
	if err != nil {
		return nil, err
	}
	c := &Group{b: b, swept: make(chan struct{})}
	go func() {
		sweepStale(b.sweepParents())
		close(c.swept)
	}()
	if err := live.add(c); err != nil {
		c.Delete()
		return nil, err
	}
	return c, nil
}

// IntoFD returns an fd for CLONE_INTO_CGROUP (cgroup v2) or -1 (v1: use Add).
// The fd stays valid until Delete.
func (c *Group) IntoFD() int { return c.b.intoFD() }

// ThreadJoinFiles lists the files the forking thread of the init stage
// writes "0" to, to join the cgroup before it forks the server (cgroup v1);
// none on v2, where the init stage starts inside.
func (c *Group) ThreadJoinFiles() []string { return c.b.threadJoinFiles() }

// Path is where the cgroup is on the host (cgroup v1: its memory
// controller's directory, or the first other one it joined).
func (c *Group) Path() string { return c.b.path() }

// Add moves pid (and its threads) into the cgroup.
func (c *Group) Add(pid int) error {
	if err := c.b.add(pid); err != nil {
		return fmt.Errorf("cgroups: moving pid %d into %s: %w", pid, c.b.path(), err)
	}
	return nil
}

// OOMKilled reports whether the kernel's OOM killer has acted in the cgroup.
func (c *Group) OOMKilled() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refreshEvents()
	return c.oom
}

// PidsLimitHit reports whether fork failed on the pids limit.
func (c *Group) PidsLimitHit() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refreshEvents()
	return c.pidsHit
}

// refreshEvents latches the event counters so they survive Delete.
func (c *Group) refreshEvents() {
	if c.deleted {
		return
	}
	c.oom = c.oom || c.b.oomKills() > 0
	c.pidsHit = c.pidsHit || c.b.pidsMaxHits() > 0
}

// killTimeout bounds how long Kill waits for the cgroup to empty; processes
// stuck in uninterruptible sleep (e.g. on a dead NFS server) may outlast it.
const killTimeout = 10 * time.Second

// Kill kills every process in the cgroup and waits until it is empty. It
// does not reap: the processes' parents do (exec.Cmd.Wait, the reaper).
func (c *Group) Kill() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.deleted {
		return nil
	}
	return c.kill()
}

func (c *Group) kill() error {
	deadline := time.Now().Add(killTimeout)
	pause := 100 * time.Microsecond
	for {
		if err := c.b.signalAll(); err != nil {
			return fmt.Errorf("cgroups: killing %s: %w", c.b.path(), err)
		}
		empty, err := c.b.empty()
		if err != nil {
			return fmt.Errorf("cgroups: killing %s: %w", c.b.path(), err)
		}
		if empty {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cgroups: %s still holds processes %v after SIGKILL (uninterruptible sleep?)", c.b.path(), killTimeout)
		}
		// Dying processes need a moment to leave; back off so a stuck one
		// does not cost a busy loop.
		time.Sleep(pause)
		pause = min(2*pause, 20*time.Millisecond)
	}
}

// Delete kills what is left and removes the cgroup. Safe to repeat. It
// returns once the sweep New started is done too, so that a supervisor
// that exits next leaves that clean-up whole.
func (c *Group) Delete() error {
	err := c.delete()
	if c.swept != nil {
		<-c.swept
	}
	return err
}

func (c *Group) delete() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.deleted {
		return nil
	}
	c.refreshEvents()
	if err := c.kill(); err != nil {
		return err
	}
	if err := c.b.remove(); err != nil {
		return fmt.Errorf("cgroups: removing %s: %w", c.b.path(), err)
	}
	c.deleted = true
	live.remove(c)
	return nil
}

// CPUWeight is the weight the cgroup got (Limits.CPUWeight), or 0 when
// the cpu controller could not be had for it.
func (c *Group) CPUWeight() uint64 { return c.b.cpuWeight() }

// Stats reads current memory and pids use and limits.
func (c *Group) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.deleted {
		return Stats{}
	}
	return c.b.stats()
}
