package sandbox

import (
	"fmt"
	"strings"
)

// checkLandlock names the kernel's Landlock ABI, what the sandbox uses of
// it, and what stays open for want of it. Landlock is defense in depth: a
// kernel without it (or below ABI 6) is a warning, not a failure; a kernel
// whose Landlock cannot be asked fails, since no server would start.
func checkLandlock() Check {
	c := Check{Part: "landlock"}
	s := hostLandlock()
	if s.Err != nil {
		c.Required, c.Detail = true, detail(s.Err)
		return c
	}
	c.OK, c.Detail = s.ABI >= landlockScopeABI, landlockCoverage(s.ABI)
	if open := landlockOpen(s.ABI, true); len(open) > 0 {
		c.Detail += "; open: " + strings.Join(open, "; ")
	}
	if !c.OK {
		c.Fix = fmt.Sprintf("Linux 6.12 or later with Landlock enabled (CONFIG_SECURITY_LANDLOCK=y, and landlock in the lsm= boot parameter) gives ABI %d; until then avoid {Net} host for servers you do not trust", landlockScopeABI)
	}
	return c
}
