// The last step before a server runs: fork, make the child the server's
// process (session, rlimits, credentials, no capabilities, no_new_privs,
// parent-death signal, descriptors, Landlock, seccomp) and exec it, for
// the init stage (init_main.c).
//
// The child may only make raw system calls: no malloc, no stdio, no libc
// wrappers that take locks. Sharing the parent's memory (see
// mcpsandbox_spawn), it also must not write anything but its own stack
// (and errno).

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "init.h"
#include "spawn.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#ifndef __NR_close_range
#define __NR_close_range 436
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

// fail reports the failed step and errno to the reaper and ends the child.
static void fail(int errfd, int32_t step, int32_t err) {
	int32_t msg[2] = {step, err};
	ssize_t n = write(errfd, msg, sizeof msg);
	(void)n;
	_exit(127);
}

static void child(const struct spawn_args *a, int errfd) {
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	// The Go runtime's handlers (and any ignored signal) must not survive.
	for (int sig = 1; sig < NSIG; sig++) {
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &dfl, NULL); // async-signal-safe; libc's own signals refuse, harmlessly
	}
	if (syscall(SYS_setsid) < 0)
		fail(errfd, SPAWN_SETSID, errno);

	struct rlimit core = {0, 0};
	if (syscall(SYS_setrlimit, RLIMIT_CORE, &core) < 0)
		fail(errfd, SPAWN_RLIMIT_CORE, errno);
	struct rlimit nofile = {a->nofile, a->nofile};
	if (syscall(SYS_setrlimit, RLIMIT_NOFILE, &nofile) < 0)
		fail(errfd, SPAWN_RLIMIT_NOFILE, errno);
	// Lowering needs no privilege; see init.h for the budgets.
	struct rlimit fsize = {a->fsize, a->fsize};
	struct rlimit sigpending = {SANDBOX_RLIMIT_SIGPENDING, SANDBOX_RLIMIT_SIGPENDING};
	struct rlimit msgqueue = {SANDBOX_RLIMIT_MSGQUEUE, SANDBOX_RLIMIT_MSGQUEUE};
	if ((a->fsize && syscall(SYS_setrlimit, RLIMIT_FSIZE, &fsize) < 0) ||
	    syscall(SYS_setrlimit, RLIMIT_SIGPENDING, &sigpending) < 0 ||
	    syscall(SYS_setrlimit, RLIMIT_MSGQUEUE, &msgqueue) < 0)
		fail(errfd, SPAWN_RLIMITS, errno);

	// The bounding set first, while CAP_SETPCAP is still held.
	for (int cap = 0; cap < 64; cap++) {
		if (syscall(SYS_prctl, PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
			if (errno == EINVAL)
				break; // past the kernel's last capability
			fail(errfd, SPAWN_CAPBSET, errno);
		}
	}
	if (!a->userns) {
		// In a user namespace the uid already is the caller's and the
		// kernel forbids setgroups.
		if (syscall(SYS_setgroups, 0, NULL) < 0)
			fail(errfd, SPAWN_SETGROUPS, errno);
		if (syscall(SYS_setresgid, a->gid, a->gid, a->gid) < 0)
			fail(errfd, SPAWN_SETGID, errno);
		if (syscall(SYS_setresuid, a->uid, a->uid, a->uid) < 0)
			fail(errfd, SPAWN_SETUID, errno);
	}
	if (syscall(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		fail(errfd, SPAWN_AMBIENT, errno);
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct none[2];
	memset(none, 0, sizeof none);
	if (syscall(SYS_capset, &hdr, none) < 0)
		fail(errfd, SPAWN_CAPSET, errno);
	if (syscall(SYS_getuid) == 0 || syscall(SYS_geteuid) == 0)
		fail(errfd, SPAWN_STILL_ROOT, 0);

	if (syscall(SYS_chdir, a->dir) < 0)
		fail(errfd, SPAWN_CHDIR, errno);
	if (syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		fail(errfd, SPAWN_NO_NEW_PRIVS, errno);
	// Credential changes clear the parent-death signal: arm it again, then
	// make sure the reaper did not die in between.
	if (syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		fail(errfd, SPAWN_PDEATHSIG, errno);
	if (syscall(SYS_getppid) != a->reaper)
		fail(errfd, SPAWN_REAPER_GONE, 0);
	// Close-on-exec rather than close: errfd must stay open until exec.
	if (syscall(__NR_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		fail(errfd, SPAWN_CLOSE_RANGE, errno);

	sigset_t none_blocked;
	sigemptyset(&none_blocked);
	sigprocmask(SIG_SETMASK, &none_blocked, NULL);
	// Landlock after no_new_privs, which it needs, and before seccomp; its
	// domain holds the server and what it starts, not the reaper.
	if (a->landlock_fd >= 0 && syscall(__NR_landlock_restrict_self, a->landlock_fd, 0) < 0)
		fail(errfd, SPAWN_LANDLOCK, errno);
	// Seccomp last: from here on only execve runs.
	if (a->seccomp_len > 0) {
		struct sock_fprog prog = {(unsigned short)a->seccomp_len, (struct sock_filter *)a->seccomp};
		if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
			fail(errfd, SPAWN_SECCOMP, errno);
	}
	syscall(SYS_execve, a->path, a->argv, a->envp);
	fail(errfd, SPAWN_EXEC, errno);
}

struct child_args {
	const struct spawn_args *a;
	int errfd;
};

static int child_main(void *arg) {
	struct child_args *c = arg;
	child(c->a, c->errfd);
	return 127; // not reached: child execs or exits
}

// The child shares the reaper's memory until it execs (CLONE_VM|CLONE_VFORK,
// as posix_spawn does): no copy of the Go process's page tables and no
// copy-on-write faults, which cost a fork about a millisecond. It runs on
// its own stack and touches nothing of the parent's but errno.
#define CHILD_STACK (256 * 1024)

int mcpsandbox_spawn(const struct spawn_args *a, int errfd) {
	char *stack = mmap(NULL, CHILD_STACK, PROT_READ | PROT_WRITE,
	                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return -errno;
	struct child_args c = {a, errfd};
	sigset_t all, old;
	sigfillset(&all);
	// No signal may reach a Go handler in the child before exec.
	pthread_sigmask(SIG_SETMASK, &all, &old);
	// The parent sleeps until the child has exec'd or exited.
	pid_t pid = clone(child_main, stack + CHILD_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, &c);
	int err = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	munmap(stack, CHILD_STACK);
	return pid < 0 ? -err : pid;
}
