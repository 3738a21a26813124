package seccomp

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// actionsNeeded are the filter results the profiles use (log for
// --seccomp-log).
var actionsNeeded = []string{"allow", "errno", "kill_process", "log"}

// Info is for `mcpsandbox doctor`: whether this kernel can enforce the
// default seccomp profile, and the libseccomp version the supervisor
// compiles it with. err says what is missing and how to fix it.
func Info() (available bool, version string, err error) {
	version = libVersion()
	avail, rerr := os.ReadFile("/proc/sys/kernel/seccomp/actions_avail")
	if rerr != nil {
		return false, version, fmt.Errorf("kernel has no seccomp filter support (%v); use a kernel built with CONFIG_SECCOMP_FILTER (Linux 4.14 or later)", rerr)
	}
	have := strings.Fields(string(avail))
	for _, a := range actionsNeeded {
		if !slices.Contains(have, a) {
			return false, version, fmt.Errorf("kernel lacks the seccomp action %q (has: %s); Linux 4.14 or later is needed", a, strings.Join(have, " "))
		}
	}
	if _, err := Compile("default", AFUnix, false); err != nil {
		return false, version, fmt.Errorf("cannot compile the default seccomp profile with libseccomp %s: %w", version, err)
	}
	return true, version, nil
}
