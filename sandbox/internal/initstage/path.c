// pathrule.Within (internal/pathrule) for the init stage (init_root.c),
// which runs before any Go code can: a grant or an executable is inside a
// directory when it is the directory or lies beneath it. The supervisor
// sends only clean absolute paths, on which the two agree (shared_test.go
// checks it); unlike pathrule.Within this does not clean them.

#include <string.h>

#include "init.h"

bool path_within(const char *path, size_t path_len, const char *dir, size_t dir_len) {
	if (dir_len == 1 && dir[0] == '/')
		return true;
	if (path_len < dir_len || (dir_len > 0 && memcmp(path, dir, dir_len) != 0))
		return false;
	return path_len == dir_len || path[dir_len] == '/';
}
