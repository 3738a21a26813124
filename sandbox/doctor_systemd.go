package sandbox

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/sandbox/cgroups"
	"github.com/mcpsandbox/mcpsandbox/sandbox/scope"
)

// checkCgroupHome reports, on cgroup v2, where `run` creates its servers'
// cgroups: the cgroup it was started in, or a scope it asks systemd for,
// and whether that manager can be reached. It runs after the cgroup
// checks, which made the same request run makes.
func checkCgroupHome() []Check {
	h, ok := cgroups.HomeV2("doctor")
	if !ok {
		return nil
	}
	m := scope.ForThisProcess(os.Environ())
	mc := Check{Part: "systemd manager", Required: h.Reason != ""}
	// The scope request already reached the manager; dial only when none was made.
	addr, err := h.Address, error(nil)
	if addr == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		addr, err = scope.Reachable(ctx, m)
	}
	if err == nil {
		mc.OK, mc.Detail = true, fmt.Sprintf("%s answers at %s", m, strings.TrimPrefix(addr, "unix:path="))
	} else {
		mc.Detail = detail(err)
		mc.Fix = "needed only when the cgroup mcpsandbox starts in cannot be used: start the host in a login session " +
			"(pam_systemd starts user@UID.service), or run mcpsandbox as a systemd service with Delegate=yes"
	}

	hc := Check{Part: "cgroup of its own", Required: true, OK: h.Err == nil}
	switch {
	case h.Err != nil:
		hc.Detail = h.Err.Error()
	case h.Scope == "":
		hc.Detail = "uses the cgroup it was started in, " + h.Dir + ", which it may manage alone"
	default:
		hc.Detail = fmt.Sprintf("%s; so run asks %s at %s for a scope with Delegate=yes (doctor got %s in %v)%s",
			h.Reason, h.Manager, h.Address, h.Scope, h.Took.Round(time.Millisecond), scopeControllers(h.Controllers()))
	}
	return []Check{mc, hc}
}

// scopeControllers says which controllers the scope offers its servers.
func scopeControllers(offered []string) string {
	s := "; it offers the controllers " + strings.Join(offered, " ")
	var missing []string
	for _, c := range []string{"cpu", "memory", "pids", "io"} {
		if !slices.Contains(offered, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		// user@.service delegates cpu, memory and pids by default; run needs no others.
		s += " (not " + strings.Join(missing, ", ") + ")"
	}
	return s
}
