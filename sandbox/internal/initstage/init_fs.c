// The new mount API for the init stage: trees are copied from the host as
// detached mounts (open_tree), given their attributes, then attached beneath
// the new root through descriptors that never follow a symlink, so nothing
// a server planted in a granted directory can redirect a mount.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "init.h"

int fs_open_no_symlinks(int dirfd, const char *path, uint64_t extra_flags) {
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | extra_flags,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
}

// fs_clone_tree copies the mount tree at path (or at dirfd itself, for "")
// as a detached mount, submounts included.
int fs_clone_tree(int dirfd, const char *path) {
	unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE;
	if (path[0] == 0)
		flags |= AT_EMPTY_PATH;
	return (int)syscall(SYS_open_tree, dirfd, path, flags);
}

static int setattr(int tree, uint64_t set, int userns) {
	struct mount_attr attr = {.attr_set = set, .propagation = MS_PRIVATE};
	if (userns >= 0) {
		attr = (struct mount_attr){.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns};
	}
	return (int)syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr);
}

// fs_set_attrs sets attrs on every mount of a detached tree and makes it
// private.
int fs_set_attrs(int tree, uint64_t attrs) { return setattr(tree, attrs, -1); }

// fs_set_idmap idmaps a detached tree by userns's mapping.
int fs_set_idmap(int tree, int userns) { return setattr(tree, 0, userns); }

int fs_attach(int tree, int target) {
	return (int)syscall(SYS_move_mount, tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
}

// fs_bind_over mounts a copy of src over dst (both trusted paths).
int fs_bind_over(const char *src, const char *dst, uint64_t attrs) {
	int tree = fs_clone_tree(AT_FDCWD, src);
	if (tree < 0)
		return -1;
	int target = -1, rc = -1;
	if (fs_set_attrs(tree, attrs) == 0 && (target = open(dst, O_PATH | O_CLOEXEC | O_NOFOLLOW)) >= 0)
		rc = fs_attach(tree, target);
	int err = errno;
	close(tree);
	if (target >= 0)
		close(target);
	errno = err;
	return rc;
}

// fs_mkdir_beneath opens path's directories beneath dirfd one component at a
// time, making those missing (0755), never through a symlink. Returns an
// O_PATH descriptor of the last one.
int fs_mkdir_beneath(int dirfd, const char *path) {
	int cur = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	char name[4096];
	for (const char *p = path; cur >= 0;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		size_t n = strcspn(p, "/");
		if (n >= sizeof name) {
			close(cur);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(name, p, n);
		name[n] = 0;
		p += n;
		int next = fs_open_no_symlinks(cur, name, O_DIRECTORY);
		if (next < 0 && errno == ENOENT) {
			if (mkdirat(cur, name, 0755) == 0 || errno == EEXIST)
				next = fs_open_no_symlinks(cur, name, O_DIRECTORY);
		}
		int err = errno;
		close(cur);
		errno = err;
		cur = next;
	}
	return cur;
}

// fs_mount_point_beneath makes path beneath root (a directory, or a file
// for a file's mount) and opens it without following symlinks.
int fs_mount_point_beneath(int root, const char *path, bool dir) {
	char parent_path[4096];
	size_t len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--;
	if (len >= sizeof parent_path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(parent_path, path, len);
	parent_path[len] = 0;
	char *slash = strrchr(parent_path, '/');
	const char *leaf = slash ? slash + 1 : parent_path;
	if (slash)
		*slash = 0;
	if (!*leaf) {
		errno = EINVAL;
		return -1;
	}
	char leafbuf[256];
	if (strlen(leaf) >= sizeof leafbuf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(leafbuf, leaf);
	int parent = fs_mkdir_beneath(root, slash ? parent_path : "");
	if (parent < 0)
		return -1;
	int fd = fs_open_no_symlinks(parent, leafbuf, 0);
	if (fd >= 0 || errno != ENOENT) {
		int err = errno;
		close(parent);
		errno = err;
		return fd;
	}
	int rc;
	if (dir) {
		rc = mkdirat(parent, leafbuf, 0755);
	} else {
		rc = openat(parent, leafbuf, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (rc >= 0)
			rc = close(rc);
	}
	if (rc < 0 && errno != EEXIST) {
		int err = errno;
		close(parent);
		errno = err;
		return -1;
	}
	fd = fs_open_no_symlinks(parent, leafbuf, 0);
	int err = errno;
	close(parent);
	errno = err;
	return fd;
}

// write_all writes all of data to fd; -1 with errno when it cannot.
int write_all(int fd, const char *data, size_t len) {
	while (len > 0) {
		ssize_t n = write(fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

// fs_write_file creates path (0644 before the umask) holding data.
int fs_write_file(const char *path, const char *data, size_t len) {
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -1;
	if (write_all(fd, data, len) < 0) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return close(fd);
}
