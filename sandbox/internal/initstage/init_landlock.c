// Landlock for the server (DESIGN §9): the supervisor creates the ruleset
// (its handled rights and scopes, from the kernel's ABI) and hands it over
// as LANDLOCK_FD; the places its rules name exist only inside, so the init
// stage adds them here once the root is built, and the server's process
// restricts itself with it right before seccomp (spawn.c). The init stage,
// the server's reaper, stays outside the domain.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "init.h"

#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#define RULE_PATH_BENEATH 1 // LANDLOCK_RULE_PATH_BENEATH

// linux/landlock.h's landlock_path_beneath_attr, which older headers lack.
struct path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

static void add_rule(const char *path, uint64_t access) {
	// The sandbox's own mounts, which no server has run in yet; still,
	// never through a symlink.
	int fd = fs_open_no_symlinks(AT_FDCWD, path, O_DIRECTORY);
	if (fd < 0)
		init_fail("Landlock: opening %s for its rule: %s", path, err_text(errno));
	struct path_beneath rule = {.allowed_access = access, .parent_fd = fd};
	if (syscall(__NR_landlock_add_rule, LANDLOCK_FD, RULE_PATH_BENEATH, &rule, 0) < 0) {
		int err = errno;
		init_fail("Landlock: adding the rule for %s: landlock_add_rule: %s%s", path, err_text(err),
			err == EBADF || err == EBADFD ? " (no ruleset was handed to the init stage)" : "");
	}
	close(fd);
}

void landlock_add_rules(const struct landlock_rules *l) {
	if (!l->on)
		return;
	if (l->root_access)
		add_rule("/", l->root_access);
	if (l->private_access) {
		for (size_t i = 0; i < l->places.n; i++)
			add_rule(l->places.v[i], l->private_access);
	}
}

_Noreturn void landlock_restrict_failed(int err) {
	init_fail("Landlock: restricting the server: landlock_restrict_self: %s%s", err_text(err),
		err == EPERM ? " (no_new_privs was not set)" : "");
}
