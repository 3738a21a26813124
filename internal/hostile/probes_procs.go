//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// textStart is where the non-PIE Go text segment (of this binary and of the
// test binary) begins: a readable address in both.
const textStart = 0x400000

// hostTargets are the processes outside the sandbox, with a label.
func hostTargets(a *Args) map[string]int {
	t := map[string]int{}
	if a.HostPid > 0 {
		t["host canary"] = a.HostPid
	}
	if a.SupervisorPid > 0 {
		t["supervisor"] = a.SupervisorPid
	}
	return t
}

// onLockedThread runs f on an OS thread that is thrown away afterwards, so
// that a successful ptrace attach or unshare dies with the thread.
func onLockedThread(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		f()
	}()
	<-done
}

func trySeize(at *attempts, label string, pid int) {
	onLockedThread(func() {
		at.try(fmt.Sprintf("ptrace(PTRACE_SEIZE, %s pid %d)", label, pid), unix.PtraceSeize(pid))
	})
}

func probePtraceHost(a *Args, at *attempts) {
	for label, pid := range hostTargets(a) {
		trySeize(at, label, pid)
	}
	trySeize(at, "sandbox pid 1 (reaper)", 1)
}

func probeSignalHost(a *Args, at *attempts) {
	for label, pid := range hostTargets(a) {
		at.try(fmt.Sprintf("kill(%s pid %d, 0)", label, pid), unix.Kill(pid, 0))
		fd, err := unix.PidfdOpen(pid, 0)
		if err == nil {
			unix.Close(fd)
		}
		at.try(fmt.Sprintf("pidfd_open(%s pid %d)", label, pid), err)
		var rl unix.Rlimit
		at.try(fmt.Sprintf("prlimit(%s pid %d, get)", label, pid), unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &rl))
	}
}

// vmRead reads 8 bytes at textStart of pid; EFAULT still means the process
// was reached.
func vmRead(pid int) error {
	buf := make([]byte, 8)
	local := []unix.Iovec{{Base: &buf[0], Len: uint64(len(buf))}}
	remote := []unix.RemoteIovec{{Base: textStart, Len: len(buf)}}
	_, err := unix.ProcessVMReadv(pid, local, remote, 0)
	if errors.Is(err, unix.EFAULT) {
		return nil
	}
	return err
}

func probeProcessVMHost(a *Args, at *attempts) {
	for label, pid := range hostTargets(a) {
		at.try(fmt.Sprintf("process_vm_readv(%s pid %d)", label, pid), vmRead(pid))
	}
	at.try("process_vm_readv(sandbox pid 1)", vmRead(1))
}

// probePtraceSeccomp aims the ptrace family at the server's own child, which
// the kernel would allow: only the seccomp profile stops it.
func probePtraceSeccomp(a *Args, at *attempts) {
	child, err := startChild(modePause)
	if err != nil {
		at.got("cannot start a child to trace (%v): unverifiable", err)
		return
	}
	defer stopChild(child)
	pid := child.Process.Pid
	onLockedThread(func() { at.denied("ptrace(PTRACE_SEIZE, own child)", unix.PtraceSeize(pid)) })
	at.denied("process_vm_readv(own child)", vmRead(pid))
	_, err = unix.ProcessVMWritev(pid, nil, nil, 0)
	at.denied("process_vm_writev(own child, 0 bytes)", err)
	_, _, errno := unix.Syscall(unix.SYS_KCMP, uintptr(os.Getpid()), uintptr(pid), 0 /* KCMP_FILE */)
	if errno == 0 {
		at.denied("kcmp(own child)", nil)
	} else {
		at.denied("kcmp(own child)", errno)
	}
	if pidfd, err := unix.PidfdOpen(pid, 0); err != nil {
		at.note("pidfd_open(own child): %s", errText(err))
	} else {
		fd, err := unix.PidfdGetfd(pidfd, 0, 0)
		if err == nil {
			unix.Close(fd)
		}
		at.denied("pidfd_getfd(own child, fd 0)", err)
		unix.Close(pidfd)
	}
}

// probeReaperAccess: the reaper (pid 1 here) runs without the seccomp filter;
// writing its memory would run code outside the filter.
func probeReaperAccess(a *Args, at *attempts) {
	for _, f := range []string{"/proc/1/mem"} {
		if fd, err := unix.Open(f, unix.O_RDWR|unix.O_CLOEXEC, 0); err == nil {
			unix.Close(fd)
			at.got("opened %s read-write", f)
		} else {
			at.note("open %s read-write: %s", f, errText(err))
		}
	}
	tryRead(at, "/proc/1/environ")
	tryRead(at, "/proc/1/fd")
	tryRead(at, "/proc/1/map_files")
}

func probeHostProcessesVisible(a *Args, at *attempts) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		at.got("cannot list /proc (%v): unverifiable", err)
		return
	}
	var seen []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		cmd = bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})
		seen = append(seen, fmt.Sprintf("%d:%s", pid, strings.TrimSpace(string(cmd))))
		if a.HostToken != "" && bytes.Contains(cmd, []byte(a.HostToken)) {
			at.got("host canary process visible as pid %d", pid)
		}
		if a.SupervisorPid > 0 && pid == a.SupervisorPid && !bytes.Contains(cmd, []byte("hostile")) {
			at.got("supervisor pid %d visible (%s)", pid, cmd)
		}
	}
	at.note("visible: %s", strings.Join(seen, ", "))
}

// probeProcExeWrite opens the supervisor's and the reaper's executables for
// writing (CVE-2019-5736) and never writes. ETXTBSY counts as reached: it
// only holds while the program runs.
func probeProcExeWrite(a *Args, at *attempts) {
	targets := map[string]string{"reaper": "/proc/1/exe"}
	for label, pid := range hostTargets(a) {
		targets[label] = "/proc/" + strconv.Itoa(pid) + "/exe"
	}
	for label, p := range targets {
		exeOpen(at, label+" "+p, p)
		// The O_PATH handle, reopened later through /proc/self/fd, is how
		// the CVE waits for the binary to stop running.
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			at.note("open %s O_PATH: %s", p, errText(err))
			continue
		}
		at.note("open %s O_PATH succeeded", p)
		exeOpen(at, label+" via O_PATH handle", "/proc/self/fd/"+strconv.Itoa(fd))
		unix.Close(fd)
	}
}

func exeOpen(at *attempts, label, p string) {
	fd, err := unix.Open(p, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	switch {
	case err == nil:
		unix.Close(fd)
		at.got("opened %s for writing", label)
	case errors.Is(err, unix.ETXTBSY):
		at.got("%s is writable but busy (ETXTBSY): it becomes writable once it exits", label)
	default:
		at.note("open %s for writing: %s", label, errText(err))
	}
}

func startChild(mode string, extra ...string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, append([]string{mode}, extra...)...)
	cmd.Env = []string{"GOMAXPROCS=1"}
	return cmd, cmd.Start()
}

func stopChild(cmd *exec.Cmd) {
	cmd.Process.Kill()
	cmd.Wait()
}
