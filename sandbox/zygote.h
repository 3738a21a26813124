// Shared between zygote.c and zygote.go.
#include <sys/types.h>

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
