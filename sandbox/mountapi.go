package sandbox

import (
	"strings"

	"golang.org/x/sys/unix"
)

// Thin wrappers over the fd-based mount API (Linux 5.12+ for mount_setattr).
// Working on descriptors means a path is resolved once, under rules we pick,
// and a later mount cannot be redirected by a symlink swapped in meanwhile.

// openNoSymlinks opens path (from dirfd) as an O_PATH descriptor, refusing
// any symlink on the way: ELOOP then names the problem.
func openNoSymlinks(dirfd int, path string, extra uint64) (int, error) {
	return unix.Openat2(dirfd, path, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC | extra,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
}

// cloneTree makes a detached, recursive copy of the mount tree at
// dirfd/path (AT_EMPTY_PATH when path is ""). Recursive because a
// non-recursive copy of a tree with locked submounts is refused inside a
// user namespace, and because submounts must get the same attributes.
func cloneTree(dirfd int, path string) (int, error) {
	flags := uint(unix.OPEN_TREE_CLONE | unix.OPEN_TREE_CLOEXEC | unix.AT_RECURSIVE)
	if path == "" {
		flags |= unix.AT_EMPTY_PATH
	}
	return unix.OpenTree(dirfd, path, flags)
}

// setTreeAttrs sets mount attributes (unix.MOUNT_ATTR_*) on every mount of a
// detached tree and makes them private.
func setTreeAttrs(tree int, set uint64) error {
	return unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE,
		&unix.MountAttr{Attr_set: set, Propagation: unix.MS_PRIVATE})
}

// attachTree mounts a detached tree on the object target refers to.
func attachTree(tree, target int) error {
	return unix.MoveMount(tree, "", target, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
}

// bindOver binds the tree at path src over path dst (both ours: inside the
// staging root, before the server exists) with the given attributes.
func bindOver(src, dst string, attrs uint64) error {
	tree, err := cloneTree(unix.AT_FDCWD, src)
	if err != nil {
		return err
	}
	defer unix.Close(tree)
	if err := setTreeAttrs(tree, attrs); err != nil {
		return err
	}
	target, err := unix.Open(dst, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer unix.Close(target)
	return attachTree(tree, target)
}

// components splits a clean absolute path into its names.
func components(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// mkdirAllBeneath creates the directories of rel beneath dirfd without
// following symlinks and returns an O_PATH descriptor of the last one.
func mkdirAllBeneath(dirfd int, names []string) (int, error) {
	cur, err := unix.Dup(dirfd)
	if err != nil {
		return -1, err
	}
	unix.CloseOnExec(cur)
	for _, name := range names {
		next, err := openNoSymlinks(cur, name, unix.O_DIRECTORY)
		if err == unix.ENOENT {
			if err = unix.Mkdirat(cur, name, 0o755); err == nil || err == unix.EEXIST {
				next, err = openNoSymlinks(cur, name, unix.O_DIRECTORY)
			}
		}
		unix.Close(cur)
		if err != nil {
			return -1, err
		}
		cur = next
	}
	return cur, nil
}

// mountPointBeneath returns an O_PATH descriptor of root/path, creating it
// (a directory, or an empty file when dir is false) without following
// symlinks.
func mountPointBeneath(root int, path string, dir bool) (int, error) {
	names := components(path)
	parent, err := mkdirAllBeneath(root, names[:len(names)-1])
	if err != nil {
		return -1, err
	}
	defer unix.Close(parent)
	leaf := names[len(names)-1]
	fd, err := openNoSymlinks(parent, leaf, 0)
	if err != unix.ENOENT {
		return fd, err
	}
	if dir {
		err = unix.Mkdirat(parent, leaf, 0o755)
	} else {
		var f int
		f, err = unix.Openat(parent, leaf, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err == nil {
			unix.Close(f)
		}
	}
	if err != nil && err != unix.EEXIST {
		return -1, err
	}
	return openNoSymlinks(parent, leaf, 0)
}
