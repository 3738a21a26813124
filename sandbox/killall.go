package sandbox

import "github.com/mcpsandbox/mcpsandbox/sandbox/cgroups"

// KillAll kills every confined server this process started, with all it
// started, and removes their cgroups; a sandbox started afterwards fails.
// It is for a supervisor about to exit without closing them (a second
// SIGTERM while the first one's shutdown runs): killing each sandbox's
// init ends its pid namespace, and nothing is left, not even an empty
// cgroup for the next start to sweep.
func KillAll() error { return cgroups.DeleteAll() }
