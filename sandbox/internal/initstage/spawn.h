// Shared between spawn.c and init_main.c.
#include <stdint.h>
#include <sys/types.h>

struct spawn_args {
	const char *path;  // executable, as seen inside the sandbox
	char *const *argv; // NULL-terminated
	char *const *envp; // NULL-terminated
	const char *dir;   // working directory
	int userns;        // 1: ids already are the server's (user namespace)
	uint32_t uid, gid;
	uint64_t nofile;   // RLIMIT_NOFILE, soft and hard
	uint64_t fsize;    // RLIMIT_FSIZE, soft and hard; 0: unlimited
	const void *seccomp; // sock_filter array, or NULL
	uint32_t seccomp_len; // instructions
	int landlock_fd;   // the Landlock ruleset to restrict the server with, or -1
	pid_t reaper;      // expected parent pid (1)
};

// The step a child failed at, reported with errno over errfd.
enum {
	SPAWN_SETSID = 1,
	SPAWN_RLIMIT_CORE,
	SPAWN_RLIMIT_NOFILE,
	SPAWN_RLIMITS, // FSIZE, SIGPENDING, MSGQUEUE
	SPAWN_CAPBSET,
	SPAWN_SETGROUPS,
	SPAWN_SETGID,
	SPAWN_SETUID,
	SPAWN_AMBIENT,
	SPAWN_CAPSET,
	SPAWN_STILL_ROOT,
	SPAWN_CHDIR,
	SPAWN_NO_NEW_PRIVS,
	SPAWN_PDEATHSIG,
	SPAWN_REAPER_GONE,
	SPAWN_CLOSE_RANGE,
	SPAWN_SECCOMP,
	SPAWN_EXEC,
	SPAWN_LANDLOCK,
};

// mcpsandbox_spawn forks; the child becomes the server or writes
// {step, errno} (two int32) to errfd and exits 127. Returns the child's pid
// or -errno.
int mcpsandbox_spawn(const struct spawn_args *a, int errfd);
