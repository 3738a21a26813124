package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/containerd/cgroups/v3"
)

// cgroupLimits are the limits one server's cgroup enforces.
type cgroupLimits struct {
	Memory int64   // bytes, 0 = none; swap is always off
	Pids   int64   // 0 = none
	CPU    float64 // cores, 0 = none
}

// controllers names the controllers the limits need, the same names in
// cgroup v1 and v2.
func (lim cgroupLimits) controllers() []string {
	var c []string
	if lim.Memory > 0 {
		c = append(c, "memory")
	}
	if lim.Pids > 0 {
		c = append(c, "pids")
	}
	if lim.CPU > 0 {
		c = append(c, "cpu")
	}
	return c
}

// cgroupBackend is one cgroup version's way of doing what serverCgroup offers.
type cgroupBackend interface {
	intoFD() int
	add(pid int) error
	threadJoinFiles() []string
	// oomKills and pidsMaxHits read the kernel's event counters.
	oomKills() uint64
	pidsMaxHits() uint64
	// signalAll kills what is in the cgroup now; empty reports whether
	// nothing is left.
	signalAll() error
	empty() (bool, error)
	remove() error
	stats() Stats
	path() string
	// allDirs lists the cgroup's directories (one per v1 controller).
	allDirs() []string
}

// serverCgroup is one server's cgroup, beneath the supervisor's own.
type serverCgroup struct {
	mu      sync.Mutex
	b       cgroupBackend
	oom     bool
	pidsHit bool
	deleted bool
}

// newServerCgroup creates the cgroup and sets its limits, or fails with a
// message naming what is missing and how to fix it.
func newServerCgroup(name string, lim cgroupLimits) (*serverCgroup, error) {
	if lim.Memory < 0 || lim.Pids < 0 || lim.CPU < 0 {
		return nil, fmt.Errorf("cgroups: negative limit %+v", lim)
	}
	group := uniqueCgroupName(name)
	var (
		b   cgroupBackend
		err error
	)
	switch cgroups.Mode() {
	case cgroups.Unified:
		if h := v2Home(unifiedMount, name); h.Err != nil {
			return nil, h.Err
		}
		b, err = newV2Cgroup(unifiedMount, group, lim)
	case cgroups.Legacy, cgroups.Hybrid:
		var mounts v1Mounts
		mounts, err = readV1Mounts()
		if err == nil {
			b, err = newV1Cgroup(mounts, group, lim)
		}
	default:
		err = &cgroupError{
			Missing: "no cgroup filesystem is mounted at /sys/fs/cgroup",
			Fix:     "mount cgroup2 at /sys/fs/cgroup (or run on a host that has it); " + fixDoctor,
		}
	}
	if err != nil {
		return nil, err
	}
	go sweepStaleCgroups(b.allDirs())
	return &serverCgroup{b: b}, nil
}

// IntoFD returns an fd for CLONE_INTO_CGROUP (cgroup v2) or -1 (v1: use Add).
// The fd stays valid until Delete.
func (c *serverCgroup) IntoFD() int { return c.b.intoFD() }

// ThreadJoinFiles lists the files the forking thread of the init stage
// writes "0" to, to join the cgroup before it forks the server (cgroup v1);
// none on v2, where the init stage starts inside.
func (c *serverCgroup) ThreadJoinFiles() []string { return c.b.threadJoinFiles() }

// Add moves pid (and its threads) into the cgroup.
func (c *serverCgroup) Add(pid int) error {
	if err := c.b.add(pid); err != nil {
		return fmt.Errorf("cgroups: moving pid %d into %s: %w", pid, c.b.path(), err)
	}
	return nil
}

// OOMKilled reports whether the kernel's OOM killer has acted in the cgroup.
func (c *serverCgroup) OOMKilled() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refreshEvents()
	return c.oom
}

// PidsLimitHit reports whether fork failed on the pids limit.
func (c *serverCgroup) PidsLimitHit() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refreshEvents()
	return c.pidsHit
}

// refreshEvents latches the event counters so they survive Delete.
func (c *serverCgroup) refreshEvents() {
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
func (c *serverCgroup) Kill() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.deleted {
		return nil
	}
	return c.kill()
}

func (c *serverCgroup) kill() error {
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

// Delete kills what is left and removes the cgroup. Safe to repeat.
func (c *serverCgroup) Delete() error {
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
	return nil
}

// Stats reads current memory and pids use and limits.
func (c *serverCgroup) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.deleted {
		return Stats{}
	}
	return c.b.stats()
}

var cgroupCounter atomic.Uint64

// uniqueCgroupName makes a cgroup name from a server's name that no other
// server of this or another supervisor uses: name, supervisor pid, counter.
func uniqueCgroupName(name string) string {
	clean := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, name)
	clean = strings.TrimLeft(clean, ".")
	if len(clean) > 64 {
		clean = clean[:64]
	}
	if clean == "" {
		clean = "server"
	}
	return fmt.Sprintf("mcpsandbox-%s-%d-%d", clean, os.Getpid(), cgroupCounter.Add(1))
}

const fixDoctor = "`mcpsandbox doctor` shows what this host supports"

// cgroupError says which part of the cgroup confinement cannot be enforced
// and how to fix that.
type cgroupError struct {
	Missing string
	Fix     string
	Err     error // underlying cause, may be nil
}

func (e *cgroupError) Error() string {
	msg := "cgroups: cannot enforce limits: " + e.Missing
	if e.Err != nil {
		msg += " (" + e.Err.Error() + ")"
	}
	return msg + "; fix: " + e.Fix
}

func (e *cgroupError) Unwrap() error { return e.Err }

// creationError turns a failure to create or configure a cgroup below dir
// into a diagnosis.
func creationError(dir string, err error) error {
	var ce *cgroupError
	if errors.As(err, &ce) {
		return err
	}
	switch {
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return &cgroupError{
			Missing: "no permission to create a cgroup beneath " + dir,
			Fix: "run mcpsandbox as root, or (cgroup v2) as a systemd service with Delegate=yes, or " +
				"`systemd-run --user --scope -p Delegate=yes mcpsandbox ...`; " + fixDoctor,
			Err: err,
		}
	case errors.Is(err, syscall.EROFS):
		return &cgroupError{
			Missing: "the cgroup filesystem is read-only at " + dir,
			Fix: "give mcpsandbox a writable cgroup subtree (containers: run with a delegated cgroup, " +
				"e.g. docker --cgroupns=private with cgroup v2); " + fixDoctor,
			Err: err,
		}
	}
	return &cgroupError{Missing: "creating a cgroup beneath " + dir + " failed", Fix: fixDoctor, Err: err}
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
