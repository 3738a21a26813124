package sandbox

import (
	"fmt"
	"os"

	"github.com/mcpsandbox/mcpsandbox/sandbox/cgroups"
)

// checkHostInformation states what of the host /proc still shows a server.
// The sandbox replaces the host-wide files no namespace scopes
// (init_root.c: the kernel's arguments, the interrupt, softirq and disk
// counters, pressure stalls, the load, the boot id); what ps, top and
// language runtimes read to work stays, and sysinfo(2), which the seccomp
// profile allows as Docker's does, answers with the host's figures.
func checkHostInformation() Check {
	return Check{Part: "host information",
		Detail: "replaced in /proc: cmdline, interrupts, softirqs, diskstats, loadavg (zeros), pressure (empty), " +
			"sys/kernel/random/boot_id (one of the sandbox's own); still the host's: /proc/stat (cpu times, interrupt and " +
			"context-switch totals, boot time), uptime, meminfo, vmstat, and sysinfo(2)'s load, uptime and memory; with --net host, /proc/net; " +
			"/proc/self/mountinfo names the host's block device and its options behind /usr, the program and the grants (a bind shows its source's)" +
			mountinfoDevices(),
		Fix: "none that keeps ps, top and language runtimes working: they read those files"}
}

// mountinfoDevices: in a user namespace mknod is refused, so the sandbox
// binds the host's device nodes, whose devtmpfs mountinfo shows.
func mountinfoDevices() string {
	if os.Geteuid() == 0 {
		return ""
	}
	return ", and, without root, the size of the host's devtmpfs (half its RAM) behind the five device nodes"
}

// checkCPUWeight says whether servers get their lower CPU weight here: it
// needs the cpu controller, which an unprivileged supervisor may lack.
func checkCPUWeight(cg cgroups.Report) Check {
	c := Check{Part: "cpu weight"}
	weight := fmt.Sprintf("cpu.weight %d (cgroup v1: cpu.shares %d)", DefaultCPUWeight, cgroups.WeightShares(DefaultCPUWeight))
	for _, ctl := range cg.Controllers {
		if ctl.Name != "cpu" {
			continue
		}
		if ctl.Usable {
			c.OK = true
			c.Detail = "servers get " + weight + ", a quarter of the supervisor's and of the programs beside it in its cgroup when they want the processor too; " +
				"nothing caps them unless {CPU} does. Under systemd the supervisor's scope as a whole competes at its own weight"
			return c
		}
		c.Detail = "servers compete at the host's weight: the cpu controller is not available: " + ctl.Problem
		c.Fix = "delegate the cpu controller too, or cap servers with {CPU}"
		return c
	}
	c.Detail = "servers compete at the host's weight: the cpu controller was not probed"
	return c
}
