// The init stage's course: descriptors, configuration, the sandbox (DESIGN
// §2 order), the server, then reaping. It reports to the supervisor as JSON
// lines on fd 4 (report.go reads them): an error, or started, then exited.

#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "init.h"
#include "spawn.h"

#define CONFIG_FD 3
#define REPORT_FD 4

// The signals forwarded to the server. PID 1 of a namespace gets no
// default actions, so without a handler they would be dropped.
static const int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGWINCH, SIGCONT};

const char *err_text(int err) {
	// Go's wording (lower case), which the supervisor's messages use too.
	static char bufs[4][128];
	static int next;
	char *b = bufs[next++ % 4];
	snprintf(b, sizeof bufs[0], "%s", strerror(err));
	b[0] = (char)tolower((unsigned char)b[0]);
	return b;
}

// report_raw sends one report line; a supervisor that is gone gets none.
static void report_raw(const char *json) { write_all(REPORT_FD, json, strlen(json)); }

// json_str writes s as the inside of a JSON string at o, which has room
// for six bytes per byte of s (\u00XX), and returns the end.
static char *json_str(char *o, const char *s) {
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\') {
			*o++ = '\\';
			*o++ = (char)*p;
		} else if (*p < 0x20) {
			o += sprintf(o, "\\u%04x", *p);
		} else {
			*o++ = (char)*p;
		}
	}
	return o;
}

_Noreturn void init_fail(const char *fmt, ...) {
	char msg[2048], json[6 * sizeof msg + 32];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	char *o = json_str(json + sprintf(json, "{\"error\":\""), msg);
	strcpy(o, "\"}\n");
	report_raw(json);
	_exit(1);
}

static void on_signal(int sig) { (void)sig; }

// catch_signals blocks the forwarded signals and SIGCHLD and returns a
// signalfd for them: those arriving before the server runs wait for it.
static int catch_signals(void) {
	sigset_t set;
	sigemptyset(&set);
	struct sigaction sa = {.sa_handler = on_signal};
	for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) {
		sigaddset(&set, forwarded[i]);
		sigaction(forwarded[i], &sa, NULL);
	}
	sigaddset(&set, SIGCHLD);
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN); // a gone supervisor is seen as EPIPE
	sigprocmask(SIG_BLOCK, &set, NULL);
	return signalfd(-1, &set, SFD_CLOEXEC);
}

// adopt waits for the supervisor to adopt this pre-forked init stage and
// installs the descriptors it sends as 0–4, then EGRESS_FD (egress
// capture) and LANDLOCK_FD (the ruleset) as far as it sends them; a gap it
// fills with a placeholder is closed once the configuration says so.
// false: not adopted.
static bool adopt(int sock) {
	struct timeval tv = {.tv_sec = ADOPT_TIMEOUT_SEC};
	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	char byte;
	struct iovec iov = {&byte, 1};
	char ctl[CMSG_SPACE((LANDLOCK_FD + 1) * sizeof(int))];
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
	ssize_t n;
	while ((n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	struct cmsghdr *c = n == 1 ? CMSG_FIRSTHDR(&msg) : NULL;
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return false;
	int nfds = 0;
	for (int k = 5; k <= LANDLOCK_FD + 1; k++)
		if (c->cmsg_len == CMSG_LEN((size_t)k * sizeof(int)))
			nfds = k;
	if (nfds == 0)
		return false;
	int fds[LANDLOCK_FD + 1];
	memcpy(fds, CMSG_DATA(c), (size_t)nfds * sizeof(int));
	// Lift them out of 0–5 first, then put each in its place.
	for (int i = 0; i < nfds; i++) {
		int high = fcntl(fds[i], F_DUPFD_CLOEXEC, 10);
		if (high < 0)
			return false;
		close(fds[i]);
		fds[i] = high;
	}
	close(sock);
	for (int i = nfds; i <= LANDLOCK_FD; i++)
		close(i); // the placeholders mcpsandbox_init_run held
	for (int i = 0; i < nfds; i++) {
		if (dup3(fds[i], i, i > 2 ? O_CLOEXEC : 0) < 0)
			return false;
		close(fds[i]);
	}
	return true;
}

// cap_user_budgets gives the sandbox's own user namespace the inotify
// limits of init.h; its ucounts are checked at every level, so the host
// user keeps the rest. Before the server exists, while /proc is the host's
// mount (the sysctls are the writer's namespace's, whatever the mount).
static void cap_user_budgets(void) {
	static const struct {
		const char *file;
		int value;
	} limits[] = {
		{"/proc/sys/user/max_inotify_instances", SANDBOX_MAX_INOTIFY_INSTANCES},
		{"/proc/sys/user/max_inotify_watches", SANDBOX_MAX_INOTIFY_WATCHES},
	};
	for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
		char v[24];
		int n = snprintf(v, sizeof v, "%d\n", limits[i].value);
		int fd = open(limits[i].file, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write_all(fd, v, (size_t)n) < 0)
			init_fail("capping the sandbox's share of the user's inotify budget: %s: %s: the kernel needs CONFIG_INOTIFY_USER and user namespace sysctls (4.9+)", limits[i].file, err_text(errno));
		close(fd);
	}
}

// full_fs names the first writable place of the sandbox whose file system
// has no block or inode left for the server, or NULL: told along with the
// server's end, since a full disk often is what ended it.
static const char *full_fs(const struct init_config *c) {
	static const char *const scratch[] = {"/tmp", SANDBOX_HOME, "/dev/shm"};
	for (size_t i = 0; i < sizeof scratch / sizeof scratch[0] + c->nbinds; i++) {
		const char *p = i < 3 ? scratch[i] : c->binds[i - 3].path;
		if (i >= 3 && !c->binds[i - 3].writable)
			continue;
		struct statvfs st;
		if (statvfs(p, &st) == 0 && (st.f_bavail == 0 || (st.f_files > 0 && st.f_favail == 0)))
			return p;
	}
	for (size_t i = 0; i < c->tmpfs.n; i++) {
		struct statvfs st;
		if (statvfs(c->tmpfs.v[i], &st) == 0 && (st.f_bavail == 0 || (st.f_files > 0 && st.f_favail == 0)))
			return c->tmpfs.v[i];
	}
	return NULL;
}

static int loopback_up(void) {
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct ifreq ifr = {0};
	strcpy(ifr.ifr_name, "lo");
	int rc = ioctl(fd, SIOCGIFFLAGS, &ifr);
	if (rc == 0) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	int err = errno;
	close(fd);
	errno = err;
	return rc;
}

// enter_cgroup reads the cgroup part of the configuration, which the
// supervisor sends once the cgroup exists, and moves this process (the one
// that forks the server) into it, then makes it the root of a new cgroup
// namespace.
static void enter_cgroup(struct init_config *c) {
	const char *what;
	if (init_read_message(CONFIG_FD, c, &what) < 0)
		init_fail("reading the sandbox's cgroup: %s%s%s", what, errno ? ": " : "", errno ? err_text(errno) : "");
	close(CONFIG_FD);
	for (size_t i = 0; i < c->join.n; i++) {
		const char *f = c->join.v[i];
		int fd = open(f, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "0", 1) != 1) {
			int err = errno;
			char dir[4096];
			snprintf(dir, sizeof dir, "%s", f);
			char *slash = strrchr(dir, '/');
			if (slash)
				*slash = 0;
			init_fail("joining the server's cgroup %s: %s", dir, err_text(err));
		}
		close(fd);
	}
	if (unshare(CLONE_NEWCGROUP) < 0)
		init_fail("cgroup namespace: %s: the kernel needs CONFIG_CGROUPS with cgroup namespaces (4.6+)", err_text(errno));
}

static const char *step_name(int step) {
	switch (step) {
	case SPAWN_SETSID:
		return "setsid";
	case SPAWN_RLIMIT_CORE:
		return "RLIMIT_CORE";
	case SPAWN_RLIMITS:
		return "RLIMIT_FSIZE, RLIMIT_SIGPENDING and RLIMIT_MSGQUEUE";
	case SPAWN_CAPBSET:
		return "emptying the capability bounding set";
	case SPAWN_AMBIENT:
		return "clearing ambient capabilities";
	case SPAWN_CAPSET:
		return "clearing capabilities";
	case SPAWN_NO_NEW_PRIVS:
		return "no_new_privs";
	case SPAWN_PDEATHSIG:
		return "parent-death signal";
	}
	return "an unknown step";
}

// spawn_error fails with advice for the step the server's process failed at.
static _Noreturn void spawn_error(const struct init_config *c, int step, int err) {
	switch (step) {
	case SPAWN_RLIMIT_NOFILE:
		init_fail("{NoFile} %llu: %s (the kernel's fs.nr_open is the ceiling)", (unsigned long long)c->nofile, err_text(err));
	case SPAWN_SETGROUPS:
	case SPAWN_SETGID:
	case SPAWN_SETUID:
		init_fail("switching to the sandbox user (uid %u, gid %u): %s", c->uid, c->gid, err_text(err));
	case SPAWN_STILL_ROOT:
		init_fail("still uid 0 after the credential change: refusing to run the server as root");
	case SPAWN_CHDIR:
		init_fail("working directory %s: %s: it must be accessible to the sandbox user (uid %u)", c->dir, err_text(err), c->uid);
	case SPAWN_REAPER_GONE:
		init_fail("the sandbox's reaper is gone");
	case SPAWN_CLOSE_RANGE:
		init_fail("closing inherited descriptors: close_range: %s (Linux 5.11+ needed)", err_text(err));
	case SPAWN_LANDLOCK:
		landlock_restrict_failed(err);
	case SPAWN_SECCOMP:
		if (err == EINVAL)
			init_fail("loading seccomp: the kernel rejected the filter (EINVAL): it needs CONFIG_SECCOMP_FILTER");
		init_fail("loading seccomp: %s", err_text(err));
	case SPAWN_EXEC:
		if (err == EACCES)
			init_fail("exec %s: permission denied: the sandbox user (uid %u) must be able to read and execute it", c->exe, c->uid);
		if (err == ENOENT)
			init_fail("exec %s: no such file: if it is a script, grant its interpreter's directory with {ReadOnly}", c->exe);
		init_fail("exec %s: %s", c->exe, err_text(err));
	}
	init_fail("preparing the server process: %s: %s", step_name(step), err_text(err));
}

// start_server forks the server (spawn.c) and returns its pid once its
// exec succeeded: the error pipe is close-on-exec, so EOF means running.
static pid_t start_server(const struct init_config *c) {
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		init_fail("starting the server: %s", err_text(errno));
	struct spawn_args a = {
		.path = c->exe, .argv = c->args.v, .envp = c->env.v, .dir = c->dir,
		.userns = c->userns, .uid = c->uid, .gid = c->gid, .nofile = c->nofile, .fsize = c->fsize,
		.seccomp = c->seccomp, .seccomp_len = c->seccomp_len, .reaper = getpid(),
		.landlock_fd = c->landlock.on ? LANDLOCK_FD : -1,
	};
	char *no_env[] = {NULL};
	if (!a.envp)
		a.envp = no_env;
	pid_t pid = mcpsandbox_spawn(&a, p[1]);
	close(p[1]);
	if (pid < 0)
		init_fail("starting the server: fork: %s", err_text(-pid));
	int32_t msg[2];
	ssize_t n;
	while ((n = read(p[0], msg, sizeof msg)) < 0 && errno == EINTR)
		;
	close(p[0]);
	if (n != sizeof msg)
		return pid;
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	spawn_error(c, msg[0], msg[1]);
}

// reap stays PID 1: it forwards signals to the server, reaps orphans, and
// reports the server's end, then exits with its status (which ends every
// other process inside).
static _Noreturn void reap(const struct init_config *c, pid_t server, int sigfd) {
	for (;;) {
		struct signalfd_siginfo si;
		ssize_t n = read(sigfd, &si, sizeof si);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != sizeof si)
			init_fail("reading signals: %s", err_text(errno));
		if (si.ssi_signo != SIGCHLD) {
			if (kill(server, (int)si.ssi_signo) < 0 && errno != ESRCH)
				dprintf(2, INIT_ARG0 ": forwarding signal %u: %s\n", si.ssi_signo, err_text(errno));
			continue;
		}
		int status;
		pid_t pid;
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			if (pid != server)
				continue;
			char json[6 * 4096 + 96];
			char *o = json + sprintf(json, "{\"exited\":true,\"code\":%d,\"signal\":%d",
				WIFSIGNALED(status) ? -1 : WEXITSTATUS(status), WIFSIGNALED(status) ? WTERMSIG(status) : 0);
			const char *full = status != 0 ? full_fs(c) : NULL;
			if (full && strlen(full) < 4096)
				o = json_str(o + sprintf(o, ",\"full\":\""), full), *o++ = '"';
			strcpy(o, "}\n");
			report_raw(json);
			_exit(WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status));
		}
		if (pid < 0 && errno == ECHILD) {
			report_raw("{\"exited\":true,\"code\":127}\n");
			_exit(127); // cannot happen: the server is a child until reaped
		}
	}
}

// mcpsandbox_init_run is the init stage (init.h). Pre-forked, it takes its
// descriptors in adopt; exec'd, they are in place.
_Noreturn void mcpsandbox_init_run(int zygote_sock, int unmapped) {
	// Only ever PID 1 of a new pid namespace (and so of new mount
	// namespace too, which launch and zygote.c always make together).
	// Anything else, say a shell running this binary as mcpsandbox-init,
	// must not remount its own root or cover its /tmp.
	if (getpid() != 1) {
		dprintf(2, INIT_ARG0 ": not PID 1 of a new pid namespace: this is mcpsandbox's sandbox init stage, started by `mcpsandbox run` only\n");
		_exit(2);
	}
	// Until adopted, 0–2 are /dev/null and 3 the socket: hold 4 to
	// LANDLOCK_FD too, so that nothing opened before adoption takes a
	// number adopt replaces.
	if (zygote_sock >= 0 && (dup3(0, REPORT_FD, O_CLOEXEC) < 0 || dup3(0, EGRESS_FD, O_CLOEXEC) < 0 || dup3(0, LANDLOCK_FD, O_CLOEXEC) < 0))
		_exit(0);
	int sigfd = catch_signals();
	struct prepared_root pre = {.root = -1};
	if (zygote_sock >= 0) {
		// Build while waiting to be adopted; in a user namespace only once
		// the adopter has mapped the ids (files need an owner).
		if (!unmapped)
			root_prepare(&pre);
		if (!adopt(zygote_sock))
			_exit(0); // not adopted: nothing to report to anyone
		if (unmapped)
			root_prepare(&pre);
	} else {
		fcntl(CONFIG_FD, F_SETFD, FD_CLOEXEC);
		fcntl(REPORT_FD, F_SETFD, FD_CLOEXEC);
		fcntl(EGRESS_FD, F_SETFD, FD_CLOEXEC);   // there only with egress capture
		fcntl(LANDLOCK_FD, F_SETFD, FD_CLOEXEC); // EBADF without Landlock
		root_prepare(&pre);
	}
	// Keep the server (same uid when unprivileged) from opening this
	// process's /proc entries; not before adoption, which maps the ids of a
	// user namespace through them.
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (sigfd < 0)
		init_fail("catching signals: signalfd: %s", err_text(errno));

	struct init_config c = {.uid = 65534, .gid = 65534, .nofile = 1024};
	const char *what;
	if (init_read_message(CONFIG_FD, &c, &what) < 0)
		init_fail("reading the sandbox configuration: %s%s%s", what, errno ? ": " : "", errno ? err_text(errno) : "");
	if (!c.exe || !c.dir || c.args.n == 0)
		init_fail("reading the sandbox configuration: no command");
	if (zygote_sock >= 0 && !c.egress.on && c.landlock.on)
		close(EGRESS_FD); // adopt's placeholder in the gap before the ruleset
	if (c.userns)
		cap_user_budgets();
	if (!c.host_netns && loopback_up() < 0)
		init_fail("network namespace: bringing up lo: %s", err_text(errno));
	net_egress_handover(&c);
	if (sethostname(SANDBOX_HOSTNAME, strlen(SANDBOX_HOSTNAME)) < 0)
		init_fail("setting the hostname: %s", err_text(errno));
	if (setdomainname("(none)", 6) < 0)
		init_fail("setting the domain name: %s", err_text(errno));
	root_finish(&c, &pre, enter_cgroup);
	landlock_add_rules(&c.landlock);

	pid_t server = start_server(&c);
	report_raw("{\"started\":true}\n");
	reap(&c, server, sigfd);
}
