// The sandbox's root: a tmpfs holding /usr (and the merged-/usr links), the
// /etc files programs need, a minimal /dev, a fresh /proc with the sensitive
// files masked, size-limited /tmp, /dev/shm and HOME, the user's grants,
// and /sys with only the server's own cgroup. Everything else of the host
// stays out. DESIGN §2 lists the steps.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <linux/mount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "init.h"

// umount2 and mount without <sys/mount.h>, which clashes with linux/mount.h.
#define MNT_DETACH 2
static int do_mount(const char *src, const char *dst, const char *type, unsigned long flags, const char *data) {
	return (int)syscall(SYS_mount, src, dst, type, flags, data);
}

#define ATTR_RO (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
#define ATTR_RW (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
#define ATTR_DEV (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC)
#define ATTR_PROC (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)
#define ATTR_CGROUP ATTR_PROC // never writable; nothing there is a program

// The top-level names merged-/usr hosts make symlinks into /usr; on other
// hosts they are directories bound read-only.
static const char *const merged_usr[] = {"bin", "sbin", "lib", "lib32", "lib64", "libx32", NULL};
// The only devices the server gets.
static const struct {
	const char *name;
	unsigned minor; // of the memory devices' major 1
} dev_nodes[] = {{"null", 3}, {"zero", 5}, {"full", 7}, {"random", 8}, {"urandom", 9}, {NULL, 0}};
// /etc: host files copied (so their host symlinks into /run etc. do not
// matter), links kept as links, directories bound read-only.
static const char *const etc_copied[] = {"ld.so.cache", "ld.so.conf", "nsswitch.conf", "host.conf", "gai.conf", "timezone", NULL};
static const char *const etc_linked[] = {"localtime", "os-release", NULL};
static const char *const etc_dirs[] = {"ssl", "pki", "ca-certificates", "alternatives", "ld.so.conf.d", NULL};
// /proc: files masked with /dev/null, directories with an empty tmpfs, and
// directories made read-only.
// locks and key-users are not namespaced: the host's file locks (with
// their holders' pids and inodes) and the host's uids.
static const char *const proc_masked_files[] = {"kcore", "keys", "key-users", "locks", "timer_list", "timer_stats",
	"sched_debug", "sysrq-trigger", "latency_stats", "kallsyms", "kpagecount", "kpageflags", "kpagecgroup", NULL};
// pressure: the whole machine's stall times (PSI), a load side channel.
static const char *const proc_masked_dirs[] = {"acpi", "asound", "scsi", "driver", "pressure", NULL};
// Host-wide files no namespace scopes, replaced by fixed content as gVisor
// does, so that readers get a well-formed answer that says nothing of the
// host: the kernel's arguments, the interrupt, softirq and disk counters
// (known timing side channels), the load average. /proc/stat, which ps, top
// and Node's os.cpus() need, stays (doctor names what it still shows).
static const struct {
	const char *name, *content;
} proc_replaced[] = {
	{"cmdline", "\n"}, {"interrupts", ""}, {"softirqs", ""}, {"diskstats", ""},
	{"loadavg", "0.00 0.00 0.00 0/0 0\n"}, {NULL, NULL},
};
// The machine's boot id becomes a random one of this sandbox's own (a
// fresh uuid from the kernel), since systemd's tools and journal readers
// expect one there.
#define PROC_BOOT_ID "sys/kernel/random/boot_id"
#define PROC_RANDOM_UUID "sys/kernel/random/uuid"
static const char *const proc_read_only[] = {"sys", "bus", "fs", "irq", NULL};

// A failed step: its message, set by fail_at, reported by the caller.
static char *step_err;
static size_t step_err_len;

// staging is where the new root is built. It only changes this private
// mount namespace, and everything taken from the host beneath it is opened
// before it is covered (reads_staging). /dev/shm comes first: nothing can be
// granted beneath /dev, so a root prepared there before the configuration
// arrives (the zygote's head start) fits every configuration but one whose
// server binary lies in /dev/shm; beneath /tmp, where servers and their
// grants often are, it would have to be built again. /tmp serves where
// /dev/shm is no directory of its own.
static const char *staging = "/tmp";

static void choose_staging(void) {
	struct stat st;
	if (lstat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode))
		staging = "/dev/shm";
}

// staged is path beneath staging, written to buf.
static const char *staged(char *buf, size_t len, const char *path) {
	snprintf(buf, len, "%s%s", staging, path);
	return buf;
}

// A place beneath staging that the init stage builds itself.
#define STAGED_MAX 64

__attribute__((format(printf, 1, 2))) static int fail_at(const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(step_err, step_err_len, fmt, ap);
	va_end(ap);
	return -1;
}

// fail_within puts "what: " before the message of the step that failed.
static int fail_within(const char *what) {
	char why[512];
	snprintf(why, sizeof why, "%s", step_err);
	return fail_at("%s: %s", what, why);
}

// tree is a detached copy of something on the host.
struct tree {
	int fd;
	bool dir;
};

static void close_tree(struct tree *t) {
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}

static int finish_tree(int fd, uint64_t attrs, struct tree *t) {
	struct stat st;
	if (fs_set_attrs(fd, attrs) < 0 || fstat(fd, &st) < 0) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	*t = (struct tree){fd, S_ISDIR(st.st_mode)};
	return 0;
}

// system_tree copies a host system path; symlinks are the administrator's,
// so they are followed.
static int system_tree(const char *path, uint64_t attrs, struct tree *t) {
	int fd = fs_clone_tree(AT_FDCWD, path);
	return fd < 0 ? -1 : finish_tree(fd, attrs, t);
}

// user_tree copies a path the user granted, following no symlink; with
// userns >= 0 the copy is idmapped by it.
static int user_tree(const char *path, uint64_t attrs, int userns, struct tree *t) {
	int fd = fs_open_no_symlinks(AT_FDCWD, path, 0);
	if (fd < 0)
		return -1;
	int tree = fs_clone_tree(fd, "");
	int err = errno;
	close(fd);
	errno = err;
	if (tree < 0)
		return -1;
	if (userns >= 0 && fs_set_idmap(tree, userns) < 0) {
		err = errno;
		close(tree);
		errno = err;
		return -2; // the idmap failed
	}
	return finish_tree(tree, attrs, t);
}

// attach_bind mounts a copied tree at the same path beneath root.
static int attach_bind(int root, const char *path, struct tree *t) {
	int target = fs_mount_point_beneath(root, path, t->dir);
	if (target < 0)
		return errno == ELOOP ? fail_at("the mount point goes through a symlink inside the sandbox")
		                      : fail_at("creating the mount point: %s", err_text(errno));
	int rc = fs_attach(t->fd, target);
	int err = errno;
	close(target);
	errno = err;
	return rc < 0 ? fail_at("%s", err_text(errno)) : 0;
}

// bind_content mounts a read-only file holding content over target (an
// O_PATH descriptor). The file is made in the root's own tmpfs and
// unlinked once mounted, so that nothing but the mount names it; the
// mount is read-only whatever mode says.
static int bind_content(const char *content, size_t len, mode_t mode, int target) {
	char path[STAGED_MAX];
	staged(path, sizeof path, "/.content");
	struct tree t = {-1, false};
	int rc = -1;
	if (fs_write_file(path, content, len) == 0 && chmod(path, mode) == 0 && system_tree(path, ATTR_PROC, &t) == 0)
		rc = fs_attach(t.fd, target);
	int err = errno;
	close_tree(&t);
	unlink(path);
	errno = err;
	return rc;
}

// bind_content_over is bind_content over a trusted path.
static int bind_content_over(const char *content, size_t len, const char *path) {
	int target = open(path, O_PATH | O_CLOEXEC | O_NOFOLLOW);
	if (target < 0)
		return -1;
	int rc = bind_content(content, len, 0444, target);
	int err = errno;
	close(target);
	errno = err;
	return rc;
}

static bool exists(const char *path) {
	struct stat st;
	return lstat(path, &st) == 0;
}

static int read_file(const char *path, char **data, size_t *len) {
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	for (;;) {
		if (!buf) {
			close(fd);
			errno = ENOMEM;
			return -1;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = errno;
			free(buf);
			close(fd);
			errno = err;
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n == cap)
			buf = realloc(buf, cap *= 2);
	}
	close(fd);
	*data = buf;
	*len = n;
	return 0;
}

// populate_system shows /usr and the merged-/usr links or directories.
static int populate_system(int root) {
	struct tree usr;
	if (system_tree("/usr", ATTR_RO, &usr) < 0)
		return fail_at("/usr: %s", err_text(errno));
	int rc = attach_bind(root, "/usr", &usr);
	close_tree(&usr);
	if (rc < 0)
		return -1;
	for (const char *const *n = merged_usr; *n; n++) {
		char path[64], target[PATH_MAX];
		snprintf(path, sizeof path, "/%s", *n);
		struct stat st;
		if (lstat(path, &st) < 0) {
			if (errno == ENOENT)
				continue;
			return fail_at("%s: %s", path, err_text(errno));
		}
		if (S_ISLNK(st.st_mode)) {
			ssize_t len = readlink(path, target, sizeof target - 1);
			if (len < 0)
				return fail_at("%s: %s", path, err_text(errno));
			target[len] = 0;
			if (symlinkat(target, root, *n) < 0)
				return fail_at("%s: %s", path, err_text(errno));
		} else if (S_ISDIR(st.st_mode)) {
			struct tree t;
			if (system_tree(path, ATTR_RO, &t) < 0)
				return fail_at("%s: %s", path, err_text(errno));
			rc = attach_bind(root, path, &t);
			close_tree(&t);
			if (rc < 0)
				return -1;
		}
	}
	return 0;
}

// populate_etc writes the host's part of /etc; etc_config adds the
// configuration's (passwd, group, hosts).
static int populate_etc(int root) {
	char src[PATH_MAX], dst[PATH_MAX], target[PATH_MAX];
	if (mkdir(staged(dst, sizeof dst, "/etc"), 0755) < 0)
		return fail_at("%s", err_text(errno));
	for (const char *const *n = etc_copied; *n; n++) {
		char *data;
		size_t len;
		snprintf(src, sizeof src, "/etc/%s", *n);
		snprintf(dst, sizeof dst, "%s/etc/%s", staging, *n);
		if (read_file(src, &data, &len) < 0) {
			if (errno == ENOENT)
				continue;
			return fail_at("%s: %s", src, err_text(errno));
		}
		int rc = fs_write_file(dst, data, len);
		free(data);
		if (rc < 0)
			return fail_at("%s", err_text(errno));
	}
	for (const char *const *n = etc_linked; *n; n++) {
		snprintf(src, sizeof src, "/etc/%s", *n);
		snprintf(dst, sizeof dst, "%s/etc/%s", staging, *n);
		ssize_t len = readlink(src, target, sizeof target - 1);
		if (len >= 0) {
			target[len] = 0;
			if (symlink(target, dst) < 0)
				return fail_at("%s", err_text(errno));
			continue;
		}
		char *data;
		size_t dlen;
		if (read_file(src, &data, &dlen) == 0) {
			int rc = fs_write_file(dst, data, dlen);
			free(data);
			if (rc < 0)
				return fail_at("%s", err_text(errno));
		}
	}
	static const char hostname[] = SANDBOX_HOSTNAME "\n";
	if (fs_write_file(staged(dst, sizeof dst, "/etc/hostname"), hostname, sizeof hostname - 1) < 0)
		return fail_at("%s", err_text(errno));
	for (const char *const *n = etc_dirs; *n; n++) {
		snprintf(src, sizeof src, "/etc/%s", *n);
		struct stat st;
		if (stat(src, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		struct tree t;
		if (system_tree(src, ATTR_RO, &t) < 0)
			return fail_at("%s: %s", src, err_text(errno));
		int rc = attach_bind(root, src, &t);
		close_tree(&t);
		if (rc < 0)
			return -1;
	}
	return 0;
}

// populate_dev builds a minimal, read-only /dev: five devices, the stdio
// links, and the mount point of shm (see mount_scratch).
static int populate_dev(int root) {
	(void)root; // /dev is a tmpfs of its own
	char dev[STAGED_MAX];
	staged(dev, sizeof dev, "/dev");
	if (mkdir(dev, 0755) < 0 || do_mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,nr_inodes=64,mode=0755") < 0)
		return fail_at("%s", err_text(errno));
	int devfd = open(dev, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (devfd < 0)
		return fail_at("%s", err_text(errno));
	int rc = 0;
	for (size_t i = 0; dev_nodes[i].name && rc == 0; i++) {
		const char *name = dev_nodes[i].name;
		char src[32], leaf[32];
		snprintf(src, sizeof src, "/dev/%s", name);
		snprintf(leaf, sizeof leaf, "/%s", name);
		// Made here where the init stage may (as root), so that no mount
		// of the host's devtmpfs shows its size (half the host's RAM) in
		// mountinfo. In a user namespace mknod is refused: the host's
		// nodes are bound instead.
		if (mknodat(devfd, name, S_IFCHR | 0666, makedev(1, dev_nodes[i].minor)) == 0) {
			if (fchmodat(devfd, name, 0666, 0) < 0)
				rc = fail_at("%s: %s", src, err_text(errno));
			continue;
		}
		if (errno != EPERM) {
			rc = fail_at("%s: %s", src, err_text(errno));
			break;
		}
		struct tree t;
		if (system_tree(src, ATTR_DEV, &t) < 0) {
			rc = fail_at("%s: %s", src, err_text(errno));
			break;
		}
		if (attach_bind(devfd, leaf, &t) < 0)
			rc = fail_within(src);
		close_tree(&t);
	}
	static const char *const links[][2] = {{"fd", "/proc/self/fd"}, {"stdin", "/proc/self/fd/0"},
		{"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"}};
	for (size_t i = 0; rc == 0 && i < sizeof links / sizeof links[0]; i++) {
		if (symlinkat(links[i][1], devfd, links[i][0]) < 0)
			rc = fail_at("%s", err_text(errno));
	}
	if (rc == 0 && mkdirat(devfd, "shm", 0755) < 0)
		rc = fail_at("%s", err_text(errno));
	struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
	if (rc == 0 && syscall(SYS_mount_setattr, devfd, "", AT_EMPTY_PATH, &ro, sizeof ro) < 0)
		rc = fail_at("%s", err_text(errno));
	close(devfd);
	return rc;
}

// replace_boot_id shows a boot id of the sandbox's own in proc (on top of
// the read-only /proc/sys, which would otherwise cover it).
static int replace_boot_id(const char *proc) {
	char p[PATH_MAX], *uuid;
	size_t len;
	snprintf(p, sizeof p, "%s/" PROC_RANDOM_UUID, proc);
	if (read_file(p, &uuid, &len) < 0) {
		if (errno == ENOENT)
			return 0; // no random driver's sysctls, so no boot id either
		return fail_at("a boot id for the sandbox: /proc/" PROC_RANDOM_UUID ": %s", err_text(errno));
	}
	snprintf(p, sizeof p, "%s/" PROC_BOOT_ID, proc);
	int rc = bind_content_over(uuid, len, p);
	int err = errno;
	free(uuid);
	if (rc < 0 && err != ENOENT)
		return fail_at("masking /proc/" PROC_BOOT_ID ": %s", err_text(err));
	return 0;
}

// populate_proc mounts a fresh /proc and masks what a server must not see
// or change.
static int populate_proc(int root) {
	(void)root; // /proc is a file system of its own
	char proc[STAGED_MAX];
	staged(proc, sizeof proc, "/proc");
	if (mkdir(proc, 0555) < 0)
		return fail_at("%s", err_text(errno));
	if (do_mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		if (errno == EPERM)
			return fail_at("mounting proc: %s: the host's /proc is partly covered (as in many containers), so the kernel refuses a fresh one in a user namespace; run mcpsandbox as root or on the host", err_text(errno));
		return fail_at("mounting proc: %s", err_text(errno));
	}
	char p[PATH_MAX];
	// An empty read-only file of the root's own tmpfs, not /dev/null:
	// where /dev/null is the host's devtmpfs node (in a user namespace),
	// each mask would show that file system's size in mountinfo.
	for (const char *const *n = proc_masked_files; *n; n++) {
		snprintf(p, sizeof p, "%s/%s", proc, *n);
		if (bind_content_over("", 0, p) < 0 && errno != ENOENT)
			return fail_at("masking /proc/%s: %s", *n, err_text(errno));
	}
	for (const char *const *n = proc_masked_dirs; *n; n++) {
		snprintf(p, sizeof p, "%s/%s", proc, *n);
		if (!exists(p))
			continue;
		if (do_mount("tmpfs", p, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,nr_inodes=1,mode=0555") < 0)
			return fail_at("masking /proc/%s: %s", *n, err_text(errno));
	}
	for (size_t i = 0; proc_replaced[i].name; i++) {
		snprintf(p, sizeof p, "%s/%s", proc, proc_replaced[i].name);
		const char *content = proc_replaced[i].content;
		if (bind_content_over(content, strlen(content), p) < 0 && errno != ENOENT)
			return fail_at("masking /proc/%s: %s", proc_replaced[i].name, err_text(errno));
	}
	for (const char *const *n = proc_read_only; *n; n++) {
		snprintf(p, sizeof p, "%s/%s", proc, *n);
		if (fs_bind_over(p, p, ATTR_PROC) < 0 && errno != ENOENT)
			return fail_at("making /proc/%s read-only: %s", *n, err_text(errno));
	}
	return replace_boot_id(proc);
}

// root_prepare builds the configuration-independent part of the new root
// at staging: only host system paths, nothing a server could have
// touched. It runs while the supervisor still works out the configuration.
void root_prepare(struct prepared_root *p) {
	p->root = -1;
	p->err[0] = 0;
	step_err = p->err;
	step_err_len = sizeof p->err;
	// Mount events must not propagate back to the host.
	if (do_mount("", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		fail_at("making mounts private: %s", err_text(errno));
		return;
	}
	choose_staging();
	if (do_mount("tmpfs", staging, "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,nr_inodes=4096,mode=0755") < 0) {
		fail_at("mounting the root tmpfs: %s", err_text(errno));
		return;
	}
	// The host's /etc and /dev are read while the root is built: staging
	// (/dev/shm or /tmp) covers neither, and none of /dev's nodes.
	if ((p->root = open(staging, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
		fail_at("opening the new root: %s", err_text(errno));
		return;
	}
	static const struct {
		const char *what;
		int (*build)(int root);
	} steps[] = {{"building /usr", populate_system}, {"building /etc", populate_etc},
		{"building /dev", populate_dev}, {"building /proc", populate_proc}};
	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
		if (steps[i].build(p->root) < 0) {
			fail_within(steps[i].what);
			return;
		}
	}
}

static void discard(struct prepared_root *p) {
	if (p->root >= 0) {
		close(p->root);
		p->root = -1;
		syscall(SYS_umount2, staging, MNT_DETACH);
	}
}

// in_staging: path is staging or beneath it (path.c's rule).
static bool in_staging(const char *path) {
	return path_within(path, strlen(path), staging, strlen(staging));
}

// reads_staging reports whether the configuration takes anything from the
// host beneath staging, which a prepared root covers.
static bool reads_staging(const struct init_config *c) {
	for (size_t i = 0; i < c->nbinds; i++) {
		if (in_staging(c->binds[i].path))
			return true;
	}
	return c->exe_bind && in_staging(c->exe);
}

// The setting that granted b, as a {Field} reference: the supervisor
// names it the way the user set it (run: --rw, --ro).
static const char *flag(const struct bind *b) { return b->state ? "{StateDir}" : b->writable ? "{ReadWrite}" : "{ReadOnly}"; }

// bind_error fails with advice on a --ro/--rw source that cannot be used.
static _Noreturn void bind_error(const struct bind *b, int err) {
	switch (err) {
	case ENOENT:
		init_fail("mount %s %s: no such file or directory: create it or drop %s", flag(b), b->path, flag(b));
	case ELOOP: {
		char real[PATH_MAX];
		if (realpath(b->path, real))
			init_fail("mount %s %s: the path goes through a symlink, which the sandbox never follows: pass the real path %s", flag(b), b->path, real);
		init_fail("mount %s %s: the path goes through a symlink, which the sandbox never follows: pass the path without symlinks", flag(b), b->path);
	}
	case EACCES:
		init_fail("mount %s %s: permission denied to the supervisor", flag(b), b->path);
	}
	init_fail("mount %s %s: %s", flag(b), b->path, err_text(err));
}

// config_sources is what the configuration takes from the host.
struct config_sources {
	struct tree *binds; // parallel to c->binds
	struct tree exe;
};

// open_sources copies the user's grants and the server executable.
static void open_sources(const struct init_config *c, struct config_sources *s) {
	s->binds = calloc(c->nbinds + 1, sizeof *s->binds);
	s->exe.fd = -1;
	if (!s->binds)
		init_fail("out of memory");
	// One user namespace per owner mapped; the mounts keep what they need.
	struct {
		uint32_t uid, gid;
		int fd;
	} *ns = calloc(c->nbinds + 1, sizeof *ns);
	if (!ns)
		init_fail("out of memory");
	size_t nns = 0;
	for (size_t i = 0; i < c->nbinds; i++) {
		const struct bind *b = &c->binds[i];
		int userns = -1;
		if (b->idmapped) {
			for (size_t j = 0; j < nns; j++) {
				if (ns[j].uid == b->uid && ns[j].gid == b->gid)
					userns = ns[j].fd;
			}
			if (userns < 0) {
				if ((userns = idmap_userns(b->uid, b->gid, c->uid, c->gid)) < 0)
					init_fail("mount %s %s: mapping its owner %u to the server: %s", flag(b), b->path, b->uid, err_text(errno));
				ns[nns].uid = b->uid;
				ns[nns].gid = b->gid;
				ns[nns++].fd = userns;
			}
		}
		int rc = user_tree(b->path, b->writable ? ATTR_RW : ATTR_RO, userns, &s->binds[i]);
		if (rc == -2)
			init_fail("mount %s %s: idmapped mount: %s", flag(b), b->path, err_text(errno));
		if (rc < 0)
			bind_error(b, errno);
	}
	for (size_t j = 0; j < nns; j++)
		close(ns[j].fd);
	free(ns);
	if (c->exe_bind && user_tree(c->exe, ATTR_RO, -1, &s->exe) < 0)
		init_fail("server executable %s: %s", c->exe, err_text(errno));
}

static void close_sources(const struct init_config *c, struct config_sources *s) {
	for (size_t i = 0; i < c->nbinds; i++)
		close_tree(&s->binds[i]);
	free(s->binds);
	close_tree(&s->exe);
}

// mount_scratch mounts the size-limited /dev/shm and /tmp and the empty
// HOME, owned by the server; /dev/shm never runs programs, /tmp and HOME
// only when the policy allows it.
static void mount_scratch(const struct init_config *c) {
	char opts[128], shm[STAGED_MAX], tmp[STAGED_MAX], home[STAGED_MAX];
	unsigned long noexec = c->noexec_tmp ? MS_NOEXEC : 0;
	staged(shm, sizeof shm, "/dev/shm");
	staged(tmp, sizeof tmp, "/tmp");
	staged(home, sizeof home, SANDBOX_HOME);
	snprintf(opts, sizeof opts, "size=%llu,mode=1777", (unsigned long long)c->tmp_size);
	if (do_mount("tmpfs", shm, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) < 0)
		init_fail("building /dev/shm, /tmp and HOME: /dev/shm: %s", err_text(errno));
	if (mkdir(tmp, 0755) < 0)
		init_fail("building /dev/shm, /tmp and HOME: %s", err_text(errno));
	if (do_mount("tmpfs", tmp, "tmpfs", MS_NOSUID | MS_NODEV | noexec, opts) < 0)
		init_fail("building /dev/shm, /tmp and HOME: /tmp: %s", err_text(errno));
	if (mkdir(home, 0755) < 0)
		init_fail("building /dev/shm, /tmp and HOME: %s", err_text(errno));
	snprintf(opts, sizeof opts, "size=%llu,mode=0700,uid=%u,gid=%u", (unsigned long long)c->tmp_size, c->uid, c->gid);
	if (do_mount("tmpfs", home, "tmpfs", MS_NOSUID | MS_NODEV | noexec, opts) < 0)
		init_fail("building /dev/shm, /tmp and HOME: %s: %s", SANDBOX_HOME, err_text(errno));
}

// mount_tmpfs mounts each of the configuration's extra tmpfs like HOME,
// on a mount point made beneath root without following symlinks. They
// come after /tmp and HOME, which may hold them, and before the grants,
// which never overlap them (the supervisor refuses that).
static void mount_tmpfs(const struct init_config *c, int root) {
	char opts[64];
	uint64_t attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (c->noexec_tmp ? MOUNT_ATTR_NOEXEC : 0);
	for (size_t i = 0; i < c->tmpfs.n; i++) {
		const char *path = c->tmpfs.v[i];
		int fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
		if (fs < 0)
			init_fail("mount {Tmpfs} %s: %s", path, err_text(errno));
		int rc = 0;
		snprintf(opts, sizeof opts, "%llu", (unsigned long long)c->tmp_size);
		rc |= (int)syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", opts, 0);
		rc |= (int)syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "0700", 0);
		snprintf(opts, sizeof opts, "%u", c->uid);
		rc |= (int)syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "uid", opts, 0);
		snprintf(opts, sizeof opts, "%u", c->gid);
		rc |= (int)syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "gid", opts, 0);
		if (rc < 0 || syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
			init_fail("mount {Tmpfs} %s: %s", path, err_text(errno));
		int tree = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, attrs);
		int err = errno;
		close(fs);
		if (tree < 0)
			init_fail("mount {Tmpfs} %s: %s", path, err_text(err));
		struct tree t = {tree, true};
		if (attach_bind(root, path, &t) < 0)
			init_fail("mount {Tmpfs} %s: %s", path, step_err);
		close_tree(&t);
	}
}

// mask_sockets covers the unix sockets the supervisor found in the grants
// (host programs listen on them: an agent's, a dev server's, docker.sock)
// with an empty read-only file, so that connecting fails. The file's mode
// lets anyone write, so connect(2) gets past its permission check and is
// refused as for a socket nobody listens on (ECONNREFUSED), not EACCES;
// the read-only mount keeps it empty.
// The grants are all attached by now, so each mask lands on the mount the
// server sees at its path. One gone or no longer a socket is left alone:
// nothing listens there.
static void mask_sockets(const struct init_config *c, int root) {
	for (size_t i = 0; i < c->masked_sockets.n; i++) {
		const char *path = c->masked_sockets.v[i];
		int target = fs_open_no_symlinks(root, path + strspn(path, "/"), 0);
		if (target < 0) {
			if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR)
				continue;
			init_fail("masking the unix socket %s in a grant: %s", path, err_text(errno));
		}
		struct stat st;
		if (fstat(target, &st) < 0)
			init_fail("masking the unix socket %s in a grant: %s", path, err_text(errno));
		if (S_ISSOCK(st.st_mode) && bind_content("", 0, 0666, target) < 0)
			init_fail("masking the unix socket %s in a grant: %s", path, err_text(errno));
		close(target);
	}
}

// pin_program makes each of the configuration's pins (the server's
// program in a writable grant, and the directories and symlinks on the
// way there) a mount point of this namespace, over itself: inside, the
// kernel refuses to rename or remove a mount point (EBUSY), so the server
// can neither replace its program nor move a directory above it aside and
// make another. Files and symlinks are mounted read-only; directories keep
// their grant's attributes (and idmapping) and their submounts, so the
// rest of the grant stays as writable as granted. Pins are parents first:
// each lands on the mount the one before made.
static void pin_program(const struct init_config *c, int root) {
	for (size_t i = 0; i < c->pins.n; i++) {
		const char *path = c->pins.v[i];
		int fd = fs_open_no_symlinks(root, path + strspn(path, "/"), O_NOFOLLOW);
		if (fd < 0)
			init_fail("keeping the server's program %s read-only: %s", path,
				errno == ELOOP ? "the path changed to go through a symlink" : err_text(errno));
		struct stat st;
		struct tree t = {-1, false};
		int tree = fstat(fd, &st) < 0 ? -1 : fs_clone_tree(fd, "");
		if (tree < 0 || finish_tree(tree, S_ISDIR(st.st_mode) ? 0 : ATTR_RO, &t) < 0 || fs_attach(t.fd, fd) < 0)
			init_fail("keeping the server's program %s read-only: %s", path, err_text(errno));
		close_tree(&t);
		close(fd);
	}
}

// show_cgroup builds /sys: a read-only tmpfs holding only fs/cgroup, with
// the server's cgroup directories in it. They come last, once the cgroup
// exists; a cgroup beneath staging (never a real cgroupfs) is refused,
// since the root covers it.
static void show_cgroup(const struct init_config *c) {
	struct tree *trees = calloc(c->nview + 1, sizeof *trees);
	if (!trees)
		init_fail("out of memory");
	for (size_t i = 0; i < c->nview; i++) {
		if (in_staging(c->view[i].dir))
			init_fail("building /sys: the server's cgroup %s lies beneath %s, which the sandbox's root covers while it is built", c->view[i].dir, staging);
		if (system_tree(c->view[i].dir, ATTR_CGROUP, &trees[i]) < 0)
			init_fail("building /sys: the server's cgroup %s: %s", c->view[i].dir, err_text(errno));
	}
	char sys[STAGED_MAX];
	staged(sys, sizeof sys, "/sys");
	if (mkdir(sys, 0755) < 0 || do_mount("tmpfs", sys, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,nr_inodes=32,mode=0755") < 0)
		init_fail("building /sys: %s", err_text(errno));
	int sysfd = open(sys, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int cgfd = sysfd < 0 ? -1 : fs_mkdir_beneath(sysfd, "fs/cgroup");
	if (cgfd < 0)
		init_fail("building /sys: %s", err_text(errno));
	for (size_t i = 0; i < c->nview; i++) {
		const struct cgroup_dir *d = &c->view[i];
		if (d->name[0] == 0) { // cgroup2: the whole of CGROUP_MOUNT
			if (fs_attach(trees[i].fd, cgfd) < 0)
				init_fail("building /sys: the server's cgroup %s: %s", d->dir, err_text(errno));
		} else {
			char path[PATH_MAX];
			snprintf(path, sizeof path, "/%s", d->name);
			if (attach_bind(cgfd, path, &trees[i]) < 0)
				init_fail("building /sys: the server's cgroup %s: %s", d->dir, step_err);
		}
		for (size_t l = 0; l < d->links.n; l++) {
			if (symlinkat(d->name, cgfd, d->links.v[l]) < 0)
				init_fail("building /sys: %s", err_text(errno));
		}
		close_tree(&trees[i]);
	}
	struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
	if (syscall(SYS_mount_setattr, sysfd, "", AT_EMPTY_PATH, &ro, sizeof ro) < 0)
		init_fail("building /sys: %s", err_text(errno));
	close(cgfd);
	close(sysfd);
	free(trees);
}

// make_workdir makes a working directory that no grant holds, empty, in the
// root's own tmpfs, so relative paths beneath it resolve where grants are.
// One within a grant must exist there: making it would write to the host.
// What fails here is reported by pivot, which checks the directory.
static void make_workdir(int root, const struct init_config *c) {
	size_t len = strlen(c->dir);
	for (size_t i = 0; i < c->nbinds; i++)
		if (path_within(c->dir, len, c->binds[i].path, strlen(c->binds[i].path)))
			return;
	int fd = fs_mkdir_beneath(root, c->dir);
	if (fd >= 0)
		close(fd);
}

// pivot makes root the root of this mount namespace and detaches the
// host's, so nothing of it stays reachable.
static void pivot(int root, const struct init_config *c) {
	if (fchdir(root) < 0)
		init_fail("entering the new root: %s", err_text(errno));
	// pivot_root(".", ".") stacks the old root on the new one; detaching it
	// leaves only the new root (the runc idiom; needs no put_old directory).
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		init_fail("pivot_root: %s", err_text(errno));
	if (syscall(SYS_umount2, ".", MNT_DETACH) < 0)
		init_fail("detaching the host root: %s", err_text(errno));
	if (chdir("/") < 0)
		init_fail("entering the new root: %s", err_text(errno));
	struct stat st;
	if (stat(c->dir, &st) < 0 || !S_ISDIR(st.st_mode))
		init_fail("working directory %s does not exist inside the sandbox: grant it with {ReadOnly} or {ReadWrite}", c->dir);
}

// root_finish adds the configuration's parts to the prepared root, makes
// it read-only and pivots into it; enter_cgroup, called once all but the
// cgroup view is built, completes c with its cgroup. A configuration that
// reads beneath staging gets its sources opened before the root is
// prepared again, as the covered paths require. Fails through init_fail.
void root_finish(struct init_config *c, struct prepared_root *p, void (*enter_cgroup)(struct init_config *)) {
	struct config_sources src;
	char err[512];
	step_err = err;
	step_err_len = sizeof err;
	if (p->err[0] == 0 && reads_staging(c)) {
		discard(p);
		open_sources(c, &src);
		root_prepare(p);
		step_err = err;
	} else if (p->err[0] == 0) {
		open_sources(c, &src);
	}
	if (p->err[0] != 0)
		init_fail("%s", p->err);
	for (size_t i = 0; i < c->netc; i++) {
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/etc/%s", staging, c->etc[i].name);
		if (strchr(c->etc[i].name, '/') || fs_write_file(path, c->etc[i].data, c->etc[i].len) < 0)
			init_fail("building /etc: %s: %s", c->etc[i].name, err_text(errno));
	}
	mount_scratch(c);
	mount_tmpfs(c, p->root);
	for (size_t i = 0; i < c->nbinds; i++) {
		if (attach_bind(p->root, c->binds[i].path, &src.binds[i]) < 0)
			init_fail("mount %s %s: %s", flag(&c->binds[i]), c->binds[i].path, err);
	}
	if (c->exe_bind && attach_bind(p->root, c->exe, &src.exe) < 0)
		init_fail("making the server executable %s visible: %s", c->exe, err);
	mask_sockets(c, p->root);
	pin_program(c, p->root);
	make_workdir(p->root, c);
	close_sources(c, &src);
	enter_cgroup(c);
	show_cgroup(c);
	struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
	if (syscall(SYS_mount_setattr, p->root, "", AT_EMPTY_PATH, &ro, sizeof ro) < 0)
		init_fail("making the root read-only: %s", err_text(errno));
	pivot(p->root, c);
	close(p->root);
	p->root = -1;
}
