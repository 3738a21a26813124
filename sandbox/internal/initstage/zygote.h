// Shared between zygote.c and zygote.go.
#include <stdint.h>
#include <sys/types.h>

// The command line that makes the constructor pre-fork an init stage:
// PREFORK_SUBCOMMAND as argv[1] and none of prefork_unfit_flags (zygote.c,
// NULL-terminated) before "--". An entry "name" matches -name and --name
// with or without a value, "name=value" matches that value given as
// --name=value or --name value. The CLI's tests check this table against
// its run flags (through PreforkTrigger): it is the only copy of their
// names in C.
#define PREFORK_SUBCOMMAND "run"
extern const char *const prefork_unfit_flags[];

// In the supervisor: the pre-forked init stage, if any (sock < 0: none).
struct zygote {
	int sock;   // to the intermediate (its report) and the init (its fds)
	pid_t mid;  // the intermediate, the supervisor's child to wait for
	int userns; // 1: the namespaces include a user namespace
};
extern struct zygote mcpsandbox_zygote;

// The intermediate's report: the init's pid, or errno when it failed. A
// pidfd for the init comes with it as SCM_RIGHTS.
struct zygote_report {
	int32_t pid;
	int32_t err;
};
