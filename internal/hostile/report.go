//go:build linux

package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Args names the host-side canaries the escape probes aim at. The test
// creates every one of them outside the sandbox; none may be reachable.
type Args struct {
	SecretFile     string `json:"secret_file,omitempty"`     // host file the server must not read
	SecretDir      string `json:"secret_dir,omitempty"`      // host directory holding SecretFile
	WriteCanary    string `json:"write_canary,omitempty"`    // host path the server must not create
	ReadOnlyDir    string `json:"read_only_dir,omitempty"`   // granted with --ro; holds granted-ro.txt
	ReadWriteDir   string `json:"read_write_dir,omitempty"`  // granted with --rw
	TCPAddr        string `json:"tcp_addr,omitempty"`        // host loopback listener
	UnixSocket     string `json:"unix_socket,omitempty"`     // host pathname unix socket
	AbstractSocket string `json:"abstract_socket,omitempty"` // host abstract unix socket name, without '@'
	HostPid        int    `json:"host_pid,omitempty"`        // host process for ptrace and signals
	HostToken      string `json:"host_token,omitempty"`      // word in that process's command line
	SupervisorPid  int    `json:"supervisor_pid,omitempty"`  // the process that started the sandbox
	EnvCanary      string `json:"env_canary,omitempty"`      // variable set in the supervisor's environment
	ShmKey         int    `json:"shm_key,omitempty"`         // host System V shared memory key
	DevShmFile     string `json:"dev_shm_file,omitempty"`    // host file in /dev/shm
	SetIDFile      string `json:"setid_file,omitempty"`      // a set-ID file beneath ReadWriteDir, covered by a --ro grant

	// More TCP destinations outside the sandbox, dialled with TCPAddr: the
	// host's own addresses, addresses of other hosts.
	OtherTCP []string `json:"other_tcp,omitempty"`
	// The host's own boot id, and unix sockets host programs listen on in
	// the grants.
	HostBootID   string   `json:"host_boot_id,omitempty"`
	GrantSockets []string `json:"grant_sockets,omitempty"`
	// Files the server's program is read from besides its executable (an
	// interpreter's script), which it must not change.
	ProgramFiles []string `json:"program_files,omitempty"`
	// The host's words /proc/self/mountinfo, mounts and mountstats must
	// not show, and where the host's devtmpfs may (its device nodes bound
	// where the sandbox cannot make its own).
	HostFacts       []string `json:"host_facts,omitempty"`
	DevtmpfsAllowed []string `json:"devtmpfs_allowed,omitempty"`
	// Only runs just these classes ("" or none: all).
	Only []string `json:"only,omitempty"`
}

// Result is one escape class: Blocked is false as soon as one attempt got
// through; Detail lists every attempt and what stopped it.
type Result struct {
	Blocked bool   `json:"blocked"`
	Detail  string `json:"detail"`
}

// attempts collects the outcome of the tries of one class.
type attempts struct {
	escaped bool
	notes   []string
}

// note records an observation that decides nothing.
func (a *attempts) note(format string, args ...any) {
	a.notes = append(a.notes, fmt.Sprintf(format, args...))
}

// got records a try that got through.
func (a *attempts) got(format string, args ...any) {
	a.escaped = true
	a.notes = append(a.notes, "ESCAPED: "+fmt.Sprintf(format, args...))
}

// try records what: any nil error means the attempt got through.
func (a *attempts) try(what string, err error) bool {
	if err == nil {
		a.got("%s succeeded", what)
		return true
	}
	a.note("%s: %s", what, errText(err))
	return false
}

// denied records a try of a privileged or filtered syscall: only EPERM,
// EACCES and ENOSYS count as refused; any other outcome means the call
// reached the kernel's privileged code path (or was not filtered).
func (a *attempts) denied(what string, err error) {
	if isDenied(err) {
		a.note("%s: %s", what, errText(err))
		return
	}
	if err == nil {
		a.got("%s succeeded", what)
		return
	}
	a.got("%s reached the kernel: %s", what, errText(err))
}

func isDenied(err error) bool {
	return errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.ENOSYS)
}

func (a *attempts) result() Result {
	return Result{Blocked: !a.escaped, Detail: strings.Join(a.notes, "; ")}
}

func errText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if name := unix.ErrnoName(errno); name != "" {
			return name
		}
	}
	return err.Error()
}

type probe struct {
	name string
	run  func(a *Args, at *attempts)
}

// runProbes runs every probe; a probe that panics counts as not blocked, so
// that a broken probe can never pass for a working sandbox.
func runProbes(a *Args) map[string]Result {
	out := make(map[string]Result, len(probes))
	for _, p := range probes {
		if len(a.Only) > 0 && !slices.Contains(a.Only, p.name) {
			continue
		}
		out[p.name] = runOne(p, a)
	}
	return out
}

func runOne(p probe, a *Args) (r Result) {
	at := &attempts{}
	defer func() {
		if v := recover(); v != nil {
			at.got("probe panicked: %v", v)
			r = at.result()
		}
	}()
	p.run(a, at)
	return at.result()
}
