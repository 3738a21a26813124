package sandbox

import (
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
