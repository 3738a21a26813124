// The supervisor's user-namespace holder (userns.go): a child in a fresh
// user namespace, kept just long enough for the supervisor to write its
// maps and open it.
//
// Its twin is init_idmap.c, which does the same for the init stage's
// idmapped grants. They differ because of where they run: this one runs
// inside the multi-threaded Go supervisor, so its child may make raw system
// calls only (no libc locks another thread may hold, no Go signal handler
// reached), and Go does the rest; that one runs in the single-threaded init
// stage, before and without any Go runtime, so it forks, uses libc freely
// and maps the ids itself.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "init.h"

// mcpsandbox_userns_holder clones a child into a new user namespace. The
// child writes its pid, as this process's /proc names it, to pidfd, then
// waits to be killed. The caller writes the maps through /proc/<pid> and
// keeps the namespace by opening /proc/<pid>/ns/user. Returns the pid or
// -errno.
long mcpsandbox_userns_holder(int pidfd) {
	sigset_t all, old;
	sigfillset(&all);
	// No signal may reach a Go handler in the child.
	pthread_sigmask(SIG_SETMASK, &all, &old);
	long parent = syscall(SYS_getpid);
	long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, NULL);
	if (pid == 0) {
		// A supervisor killed before the signal was armed is gone already:
		// the holder must not outlive it (it holds the supervisor's files).
		if (syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || syscall(SYS_getppid) != parent)
			syscall(SYS_exit_group, 1);
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
