// The ELF constructor of every binary that links package sandbox. It runs
// before the Go runtime starts and does two jobs:
//
// An exec'd init stage (argv[0] INIT_ARG0): it runs the init stage
// (init_main.c) and never returns, so the Go runtime never starts in it.
//
// `mcpsandbox run`: it forks the init stage of the first sandbox at once,
// so that its namespaces and its root overlap the supervisor's start-up
// instead of following it (zygote.go adopts it; a sandbox it does not fit
// is started as usual).
//
// supervisor ── fork ── intermediate: unshares the namespaces, waits for
//                        └── fork ── init (PID 1): mcpsandbox_init_run
// The intermediate stays the init's parent and mirrors its end in its own
// exit status, which the supervisor waits for.
//
// Why the command line, and not a trigger the Go side sets (as runc's
// nsenter has its init pipe): the process to pre-fork for is the one a host
// starts as `mcpsandbox run ...`, and this constructor runs in it before any
// of its Go code, so nothing Go does can reach it in time; a variable hosts
// would have to set in their configuration would leave most without the
// zygote. So the constructor reads argv, but only through zygote.h's table,
// which the CLI's tests hold against its flags.
//
// Single-threaded, before main: plain C and system calls only.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>

#include "init.h"
#include "zygote.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_close_range
#define __NR_close_range 436
#endif

struct zygote mcpsandbox_zygote = {.sock = -1};

const char *const prefork_unfit_flags[] = {
	"unconfined", // no sandbox at all
	"net=host",   // no network namespace: the zygote's has one
	"h", "help",  // only the manual is printed
	NULL,
};

// unfit reports whether argument a (its dashes stripped), followed by next
// (NULL: none), is one of prefork_unfit_flags.
static int unfit(const char *a, const char *next) {
	for (const char *const *f = prefork_unfit_flags; *f; f++) {
		const char *eq = strchr(*f, '=');
		size_t n = eq ? (size_t)(eq - *f) : strlen(*f);
		if (strncmp(a, *f, n) != 0 || (a[n] != 0 && a[n] != '='))
			continue;
		if (!eq)
			return 1;
		const char *value = a[n] == '=' ? a + n + 1 : next;
		if (value && strcmp(value, eq + 1) == 0)
			return 1;
	}
	return 0;
}

// wanted: `mcpsandbox run` that will start a confined sandbox with a network
// namespace on cgroup v1 (v2 starts the init stage inside its cgroup with
// CLONE_INTO_CGROUP, which a pre-forked process cannot have). A wrong guess
// costs only a discarded zygote: zygote.go checks the real configuration.
static int wanted(int argc, char **argv) {
	if (argc < 3 || strcmp(argv[1], PREFORK_SUBCOMMAND) != 0)
		return 0;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0)
			break;
		if (a[0] != '-')
			continue;
		a += a[1] == '-' ? 2 : 1;
		if (unfit(a, i + 1 < argc ? argv[i + 1] : NULL))
			return 0;
	}
	struct statfs fs;
	return statfs(CGROUP_MOUNT, &fs) == 0 && fs.f_type != CGROUP2_SUPER_MAGIC;
}

static void report(int sock, pid_t pid, int err, int pidfd) {
	struct zygote_report r = {pid, err};
	struct iovec iov = {&r, sizeof r};
	char ctl[CMSG_SPACE(sizeof(int))];
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	if (pidfd >= 0) {
		memset(ctl, 0, sizeof ctl);
		msg.msg_control = ctl;
		msg.msg_controllen = sizeof ctl;
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &pidfd, sizeof(int));
	}
	sendmsg(sock, &msg, MSG_NOSIGNAL);
}

static void set_caps(uint64_t caps) {
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];
	memset(data, 0, sizeof data);
	data[0].effective = data[0].permitted = (uint32_t)caps;
	data[1].effective = data[1].permitted = (uint32_t)(caps >> 32);
	syscall(SYS_capset, &hdr, data);
}

// scrub empties the environment and the command line the init inherited
// from the supervisor (secrets, --env values): /proc/1/cmdline is readable
// by the server. The exec'd init stage has neither.
static void scrub(int argc, char **argv, char **envp) {
	static char empty[1];
	static const char name[] = INIT_ARG0;
	for (char **e = envp; *e; e++) {
		memset(*e, 0, strlen(*e));
		*e = empty;
	}
	size_t len0 = strlen(argv[0]);
	for (int i = 0; i < argc; i++)
		memset(argv[i], 0, strlen(argv[i]));
	if (len0 >= sizeof name - 1)
		memcpy(argv[0], name, sizeof name);
	else
		argv[0] = (char *)name;
	for (int i = 1; i < argc; i++)
		argv[i] = empty;
}

// Never returns: the intermediate and the init both end here.
static _Noreturn void intermediate(int sock, int userns, pid_t supervisor, int argc, char **argv, char **envp) {
	// Nothing of the host's stays open: stdio is /dev/null, fd 3 the
	// socket, everything else is closed.
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
		_exit(0);
	if (sock != 3) {
		if (dup3(sock, 3, O_CLOEXEC) < 0)
			_exit(0);
		sock = 3;
	}
	syscall(__NR_close_range, 4, ~0U, 0);
	// Its own session, like the exec'd init stage: a terminal's ^C is for
	// the supervisor, which shuts the sandbox down in order.
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != supervisor || setsid() < 0)
		_exit(0);

	int flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET;
	if (userns)
		flags |= CLONE_NEWUSER;
	if (unshare(flags) < 0) {
		report(sock, 0, errno, -1);
		_exit(0);
	}
	pid_t init = fork();
	if (init < 0) {
		report(sock, 0, errno, -1);
		_exit(0);
	}
	if (init == 0) {
		// The init: PID 1 of the new pid namespace, as the exec'd init
		// stage is (Setsid, Pdeathsig, INIT_CAPS in a user namespace).
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || setsid() < 0)
			_exit(0);
		if (userns)
			set_caps(INIT_CAPS);
		scrub(argc, argv, envp);
		mcpsandbox_init_run(sock, userns);
	}
	int pidfd = syscall(__NR_pidfd_open, init, 0);
	report(sock, pidfd < 0 ? 0 : init, pidfd < 0 ? errno : 0, pidfd);
	if (pidfd < 0)
		kill(init, SIGKILL);
	else
		close(pidfd);
	close(sock);
	// Waiting needs no privilege.
	set_caps(0);
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	int status;
	while (waitpid(init, &status, 0) < 0) {
		if (errno != EINTR)
			_exit(127);
	}
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		signal(sig, SIG_DFL);
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, sig);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		kill(getpid(), sig);
	}
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 127);
}

__attribute__((constructor)) static void zygote_start(int argc, char **argv, char **envp) {
	if (argc >= 1 && strcmp(argv[0], INIT_ARG0) == 0)
		mcpsandbox_init_run(-1, 0);
	if (!wanted(argc, argv))
		return;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return;
	if (sv[0] < 3 || sv[1] < 3) { // stdio was closed: do not take its place
		close(sv[0]);
		close(sv[1]);
		return;
	}
	int userns = geteuid() != 0;
	pid_t supervisor = getpid();
	pid_t mid = fork();
	if (mid < 0) {
		close(sv[0]);
		close(sv[1]);
		return;
	}
	if (mid > 0) {
		close(sv[1]);
		mcpsandbox_zygote.sock = sv[0];
		mcpsandbox_zygote.mid = mid;
		mcpsandbox_zygote.userns = userns;
		// The intermediate's report waits on the socket for zygote.go; this
		// process's Go start-up runs meanwhile.
		return;
	}
	close(sv[0]);
	intermediate(sv[1], userns, supervisor, argc, argv, envp);
}
