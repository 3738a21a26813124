// User namespaces for idmapped grants (package sandbox's idmap_mount.go
// plans them): one mapping a grant's owner to the server's ids, held by a
// short-lived child just long enough to open it.
//
// Its twin is userns_holder.c, the supervisor's holder. This one runs in
// the single-threaded init stage, with no Go runtime, so it may fork and
// use libc and writes the maps itself; that one runs in the multi-threaded
// Go supervisor, so its child makes raw system calls only and Go writes the
// maps.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "init.h"

static int write_map(const char *proc, const char *file, const char *text) {
	char path[64];
	snprintf(path, sizeof path, "%s/%s", proc, file);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	int err = errno;
	close(fd);
	errno = err;
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

// idmap_userns returns a user namespace descriptor mapping owner_uid to
// server_uid and owner_gid to server_gid; -1 with errno. When a user's
// group is root it stays unmapped (the grant is then read-only in effect,
// see grant_access.go) and the server's own gid maps to itself, so the
// server still has a mapped fsgid: without one the kernel refuses every
// creation with EOVERFLOW. A root-owned grant (owner_uid 0) maps its group,
// root's too: the supervisor lends root's ownership only under a seccomp
// filter that refuses set-ID modes (idmap_root.go).
int idmap_userns(uint32_t owner_uid, uint32_t owner_gid, uint32_t server_uid, uint32_t server_gid) {
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0) {
		int err = errno;
		close(p[0]);
		close(p[1]);
		errno = err;
		return -1;
	}
	if (pid == 0) {
		// The pid as /proc shows it: /proc here may be another pid
		// namespace's than this process's own.
		char self[24];
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		ssize_t n = readlink("/proc/self", self, sizeof self);
		if (unshare(CLONE_NEWUSER) < 0 || n <= 0 || write(p[1], self, (size_t)n) != n)
			_exit(1);
		close(p[1]);
		for (;;)
			pause();
	}
	close(p[1]);
	char self[24] = {0};
	ssize_t n;
	while ((n = read(p[0], self, sizeof self - 1)) < 0 && errno == EINTR)
		;
	close(p[0]);
	int fd = -1, err = EIO;
	if (n > 0) {
		char proc[48], uid_map[64], gid_map[64];
		snprintf(proc, sizeof proc, "/proc/%s", self);
		snprintf(uid_map, sizeof uid_map, "%u %u 1\n", owner_uid, server_uid);
		snprintf(gid_map, sizeof gid_map, "%u %u 1\n", owner_gid || owner_uid == 0 ? owner_gid : server_gid, server_gid);
		char ns[64];
		snprintf(ns, sizeof ns, "%s/ns/user", proc);
		if (write_map(proc, "uid_map", uid_map) == 0 && write_map(proc, "gid_map", gid_map) == 0)
			fd = open(ns, O_RDONLY | O_CLOEXEC);
		err = errno;
	}
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	errno = err;
	return fd;
}
