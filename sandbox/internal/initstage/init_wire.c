// Decoding the configuration messages of init.h (wire.go encodes them).

#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "init.h"

// A message is at most this large: arguments, environment and a seccomp
// program of 4096 instructions fit many times over.
#define MAX_MESSAGE (16u << 20)

// read_full reads exactly n bytes; the supervisor's end of the pipe may
// have left it non-blocking. 0, or -1 with errno (0: end of file).
static int read_full(int fd, void *buf, size_t n) {
	char *p = buf;
	while (n > 0) {
		ssize_t r = read(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN) {
			struct pollfd pfd = {.fd = fd, .events = POLLIN};
			poll(&pfd, 1, -1);
			continue;
		}
		if (r <= 0) {
			if (r == 0)
				errno = 0;
			return -1;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static uint32_t le32(const unsigned char *p) {
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p) { return le32(p) | (uint64_t)le32(p + 4) << 32; }

static char *dupz(const unsigned char *p, size_t n) {
	char *s = malloc(n + 1);
	if (!s)
		init_fail("out of memory");
	memcpy(s, p, n);
	s[n] = 0;
	return s;
}

static void push(struct str_list *l, char *s) {
	char **v = realloc(l->v, (l->n + 2) * sizeof *v);
	if (!v)
		init_fail("out of memory");
	v[l->n++] = s;
	v[l->n] = NULL;
	l->v = v;
}

static void *grow(void *v, size_t n, size_t size) {
	void *g = realloc(v, (n + 1) * size);
	if (!g)
		init_fail("out of memory");
	return g;
}

// nul_fields splits a value at its NULs into a list (the last field need
// not end in one).
static void nul_fields(const unsigned char *p, size_t n, struct str_list *out) {
	size_t start = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i == n || p[i] == 0) {
			if (i > start || i < n)
				push(out, dupz(p + start, i - start));
			start = i + 1;
		}
	}
}

// record applies one record to c; 0, or -1 when it is malformed.
static int record(struct init_config *c, uint8_t tag, const unsigned char *v, uint32_t n) {
	switch (tag) {
	case CFG_ARG:
		push(&c->args, dupz(v, n));
		return 0;
	case CFG_ENV:
		push(&c->env, dupz(v, n));
		return 0;
	case CG_JOIN:
		push(&c->join, dupz(v, n));
		return 0;
	case CFG_TMPFS:
		push(&c->tmpfs, dupz(v, n));
		return 0;
	case CFG_MASK_SOCKET:
		if (n < 2 || v[0] != '/')
			return -1;
		push(&c->masked_sockets, dupz(v, n));
		return 0;
	case CFG_PIN:
		if (n < 2 || v[0] != '/')
			return -1;
		push(&c->pins, dupz(v, n));
		return 0;
	case CFG_EXE:
		c->exe = dupz(v, n);
		return 0;
	case CFG_DIR:
		c->dir = dupz(v, n);
		return 0;
	case CFG_BIND: {
		if (n < 11)
			return -1;
		c->binds = grow(c->binds, c->nbinds, sizeof *c->binds);
		c->binds[c->nbinds++] = (struct bind){
			.writable = v[0] != 0, .state = v[0] == 2, .idmapped = v[1] != 0, .uid = le32(v + 2), .gid = le32(v + 6),
			.path = dupz(v + 10, n - 10)};
		return 0;
	}
	case CFG_EXE_BIND:
		c->exe_bind = true;
		return 0;
	case CFG_HOST_NETNS:
		c->host_netns = true;
		return 0;
	case CFG_USERNS:
		c->userns = true;
		return 0;
	case CFG_NOEXEC_TMP:
		c->noexec_tmp = true;
		return 0;
	case CFG_TMP_SIZE:
	case CFG_NOFILE:
	case CFG_FSIZE:
		if (n != 8)
			return -1;
		*(tag == CFG_TMP_SIZE ? &c->tmp_size : tag == CFG_NOFILE ? &c->nofile : &c->fsize) = le64(v);
		return 0;
	case CFG_UID:
	case CFG_GID:
		if (n != 4)
			return -1;
		*(tag == CFG_UID ? &c->uid : &c->gid) = le32(v);
		return 0;
	case CFG_SECCOMP:
		if (n == 0 || n % 8 != 0 || n / 8 > 4096)
			return -1;
		c->seccomp = dupz(v, n);
		c->seccomp_len = n / 8;
		return 0;
	case CFG_ETC: {
		const unsigned char *nul = memchr(v, 0, n);
		if (!nul || nul == v)
			return -1;
		size_t name = (size_t)(nul - v);
		c->etc = grow(c->etc, c->netc, sizeof *c->etc);
		c->etc[c->netc++] = (struct etc_file){.name = dupz(v, name), .data = dupz(nul + 1, n - name - 1), .len = n - name - 1};
		return 0;
	}
	case CFG_EGRESS:
		if (n != 8)
			return -1;
		c->egress.on = true;
		c->egress.tcp4 = le32(v);
		c->egress.tcp6 = le32(v + 4);
		return 0;
	case CFG_LANDLOCK:
		if (n < 16)
			return -1;
		c->landlock = (struct landlock_rules){.on = true, .root_access = le64(v), .private_access = le64(v + 8)};
		nul_fields(v + 16, n - 16, &c->landlock.places);
		return 0;
	case CG_VIEW: {
		struct str_list f = {0};
		nul_fields(v, n, &f);
		if (f.n < 2)
			return -1;
		c->view = grow(c->view, c->nview, sizeof *c->view);
		struct cgroup_dir *d = &c->view[c->nview++];
		*d = (struct cgroup_dir){.name = f.v[0], .dir = f.v[1]};
		for (size_t i = 2; i < f.n; i++)
			push(&d->links, f.v[i]);
		free(f.v);
		return 0;
	}
	}
	return -1;
}

// init_read_message reads one message from fd into c. -1 on error, with
// *what naming the problem (errno set when a read failed).
int init_read_message(int fd, struct init_config *c, const char **what) {
	unsigned char hdr[4];
	if (read_full(fd, hdr, sizeof hdr) < 0) {
		*what = errno ? "read" : "the supervisor closed the pipe";
		return -1;
	}
	uint32_t len = le32(hdr);
	errno = 0; // from here on, problems are the message's, not a read's
	if (len > MAX_MESSAGE) {
		*what = "message too large";
		return -1;
	}
	unsigned char *buf = malloc(len ? len : 1);
	if (!buf)
		init_fail("out of memory");
	if (read_full(fd, buf, len) < 0) {
		*what = errno ? "read" : "the supervisor closed the pipe";
		return -1;
	}
	errno = 0;
	for (uint32_t off = 0; off < len;) {
		if (len - off < 5) {
			*what = "truncated record";
			return -1;
		}
		uint8_t tag = buf[off];
		uint32_t n = le32(buf + off + 1);
		off += 5;
		if (n > len - off || record(c, tag, buf + off, n) < 0) {
			*what = "malformed record";
			return -1;
		}
		off += n;
	}
	free(buf);
	return 0;
}
