package sandbox

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"syscall"

	"github.com/mcpsandbox/mcpsandbox/sandbox/cgroups"
)

// Spec says what to run and how to confine it.
type Spec struct {
	Name string   // label for logs and the cgroup name
	Args []string // argv; Args[0] is looked up in the host's PATH
	Env  []string // NAME=VALUE pairs declared by policy
	Dir  string   // working directory (inside); empty means HOME
	// Script is the file an interpreter among Args runs (node's or
	// python's script, relative to Dir): kept read-only, as Args[0] is,
	// wherever a writable grant holds it (program.go).
	Script string

	Unconfined bool // run with the caller's rights (loudly logged by the caller)
	// Inherit is the environment an unconfined server starts with, Env
	// added to it: the caller's own, passed in (the sandbox reads no
	// process environment), whose PATH finds Args[0]. A confined server
	// never gets it.
	Inherit []string

	ReadOnly   []string // host paths bound read-only at the same path
	ReadWrite  []string // host paths bound read-write at the same path
	TmpSize    int64    // bytes for the /tmp tmpfs, and for each of Tmpfs
	Tmpfs      []string // more private tmpfs mounts at these absolute paths inside (tmpfs.go)
	StateDir   string   // host directory of the server's own, made and bound read-write (statedir.go)
	Net        Network  // what its sockets reach (network.go); NetNone: lo only
	User       string   // run as this host user instead of a dynamic uid
	NoFile     uint64   // RLIMIT_NOFILE
	FileSize   int64    // RLIMIT_FSIZE in bytes (0 = none)
	NoExecTmp  bool     // mount /tmp and HOME noexec (/dev/shm always is)
	Seccomp    string   // "default" or a Docker/OCI seccomp JSON file
	SeccompLog bool     // log would-be denials instead of refusing
	Memory     int64    // cgroup memory limit in bytes (0 = none)
	Pids       int64    // cgroup pids limit (0 = none)
	CPU        float64  // cgroup CPU limit in cores (0 = none)

	// Capture is what NetEgress lands on the supervisor's listeners
	// (capture.go); only with NetEgress.
	Capture CaptureSpec
	// Egress is called once per start, when the listeners exist and before
	// the server runs; it takes ownership of the listeners (serves and later
	// closes them). An error fails the start (the server never runs); so
	// does a failure after it, and then Start closes the listeners. Only
	// with NetEgress, which needs it.
	Egress func(Listeners) error
	// Resolver, only with NetNone, gives the server the supervisor's own
	// resolver: called once per start as Egress is, with the DNS listeners
	// on 127.0.0.1:53 (which the server's resolv.conf then names) and no
	// TCP one. So the supervisor learns each name the server tries while
	// its namespace still reaches nothing past lo: the server gets UDP
	// sockets only (seccomp.InetQueries), and every route but lo's is
	// prohibited. Nil: no resolver, AF_UNIX sockets only.
	Resolver func(Listeners) error
	// CPUWeight is the server's CPU share against the supervisor and the
	// programs beside it when both want the CPU (cgroup v2 cpu.weight,
	// v1 cpu.shares; a cgroup's default is 100): 0 is DefaultCPUWeight.
	CPUWeight uint64
}

// DefaultCPUWeight is a quarter of a host process group's weight, so that
// busy servers leave the host responsive without a cap (cgroups says why).
const DefaultCPUWeight = cgroups.DefaultCPUWeight

// Process is a started server. Its pipes are the server's stdio.
type Process interface {
	Stdin() io.WriteCloser
	Stdout() io.Reader
	Stderr() io.Reader
	Pid() int
	// Signal delivers sig to the server (through the reaper when confined).
	Signal(sig os.Signal) error
	// Kill ends the server and every process it started. Safe to repeat.
	Kill() error
	// Done is closed once the server has exited; Exit is valid after that.
	Done() <-chan struct{}
	Exit() Exit
	// Stats reports resource use; zero values where unknown.
	Stats() Stats
	// Close kills what is left and releases resources (cgroups, pipes).
	Close() error
}

// Exit says how a server ended.
type Exit struct {
	Code      int            // exit status, -1 when killed by a signal
	Signal    syscall.Signal // the killing signal, 0 when it exited
	OOMKilled bool           // the cgroup's memory limit killed it
	PidsLimit bool           // a fork failed on the cgroup's pids limit while it ran
	DiskFull  string         // a writable place (/tmp, HOME, a grant) was full when it failed
	SetupErr  error          // confinement could not be set up; it never ran
}

// Failed reports whether the exit counts as a failure for restart purposes.
func (e Exit) Failed() bool { return e.Code != 0 || e.Signal != 0 || e.OOMKilled || e.SetupErr != nil }

func (e Exit) String() string {
	s := e.cause()
	if e.PidsLimit && e.SetupErr == nil {
		s += " after reaching its pids limit (a fork failed on the cgroup's pids.max)"
	}
	if e.DiskFull != "" && e.SetupErr == nil {
		s += " while " + e.DiskFull + " was full (no space left on its file system)"
	}
	return s
}

func (e Exit) cause() string {
	switch {
	case e.SetupErr != nil:
		return "sandbox setup failed: " + e.SetupErr.Error()
	case e.OOMKilled:
		return "killed: out of memory (cgroup memory limit)"
	case e.Signal == syscall.SIGXFSZ:
		return "killed: a file reached the file size limit (RLIMIT_FSIZE, signal SIGXFSZ)"
	case e.Signal != 0:
		return fmt.Sprintf("killed by signal %s", e.Signal)
	}
	return fmt.Sprintf("exited with status %d", e.Code)
}

// Stats is a snapshot of a server's resource use.
type Stats struct {
	MemoryBytes uint64
	MemoryLimit uint64
	Pids        uint64
	PidsLimit   uint64
}

// Start starts spec's program and returns once it is running (for a confined
// program: once confinement is in place and exec succeeded).
func Start(spec Spec, log *slog.Logger) (Process, error) {
	if len(spec.Args) == 0 {
		return nil, fmt.Errorf("sandbox: empty command")
	}
	if spec.Unconfined {
		return startUnconfined(spec, log)
	}
	return startConfined(spec, log)
}
