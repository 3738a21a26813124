package sandbox

/*
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

// mcpsandbox_userns_holder clones a child into a new user namespace. The
// child writes its pid, as this process's /proc names it, to pidfd, then
// waits to be killed. The caller writes the maps through /proc/<pid> and
// keeps the namespace by opening /proc/<pid>/ns/user. The child of a
// multi-threaded process makes raw system calls only.
static long mcpsandbox_userns_holder(int pidfd) {
	sigset_t all, old;
	sigfillset(&all);
	// No signal may reach a Go handler in the child.
	pthread_sigmask(SIG_SETMASK, &all, &old);
	long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, NULL);
	if (pid == 0) {
		syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		char buf[24];
		// Inside a new pid namespace getpid() is not the pid /proc shows;
		// /proc/self is.
		long n = syscall(SYS_readlinkat, AT_FDCWD, "/proc/self", buf, sizeof buf);
		if (n <= 0 || syscall(SYS_write, pidfd, buf, n) != n)
			syscall(SYS_exit_group, 1);
		for (;;)
			syscall(SYS_ppoll, NULL, 0, NULL, NULL, 0);
	}
	int err = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return pid < 0 ? -err : pid;
}
*/
import "C"

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// newUserns returns a descriptor of a fresh user namespace with the given
// uid_map and gid_map (kernel format: "inside outside count" lines). It only
// carries a mapping for an idmapped mount: no process stays in it.
// Writing arbitrary maps needs CAP_SETUID/CAP_SETGID, i.e. root.
func newUserns(uidMap, gidMap string) (int, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return -1, err
	}
	defer r.Close()
	pid := int(C.mcpsandbox_userns_holder(C.int(w.Fd())))
	w.Close()
	if pid < 0 {
		return -1, fmt.Errorf("clone(CLONE_NEWUSER): %w", syscall.Errno(-pid))
	}
	defer func() {
		unix.Kill(pid, unix.SIGKILL)
		for {
			if _, err := unix.Wait4(pid, nil, 0, nil); err != unix.EINTR {
				break
			}
		}
	}()
	buf := make([]byte, 24)
	n, err := r.Read(buf)
	if err != nil {
		return -1, fmt.Errorf("the user namespace holder did not report its pid: %v", err)
	}
	procPid := strings.TrimSpace(string(buf[:n]))
	if _, err := strconv.Atoi(procPid); err != nil {
		return -1, fmt.Errorf("the user namespace holder reported pid %q", procPid)
	}
	dir := "/proc/" + procPid
	for _, m := range []struct{ file, text string }{{"uid_map", uidMap}, {"gid_map", gidMap}} {
		if err := writeMap(dir+"/"+m.file, m.text); err != nil {
			return -1, fmt.Errorf("writing %s %q: %w", m.file, m.text, err)
		}
	}
	fd, err := unix.Open(dir+"/ns/user", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("opening the user namespace: %w", err)
	}
	return fd, nil
}

// writeMap writes a whole map in the single write(2) the kernel requires.
func writeMap(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte(text))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
