package main

import (
	"io"

	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
)

// doctorReport checks whether this machine can enforce the default
// confinement, writes what it found to w and reports whether all is well.
func doctorReport(w io.Writer) bool {
	r := sandbox.Doctor()
	io.WriteString(w, "mcpsandbox doctor: ")
	r.Write(w, flagOf)
	// The service is a way to run servers, not a part of confinement: it
	// is reported, never a failure.
	io.WriteString(w, "\n"+serviceStateOf(false).String()+"\n")
	if !r.Root {
		io.WriteString(w, serviceStateOf(true).String()+"\n")
	}
	return r.OK()
}

func doctorCommand(args []string, std stdio) int {
	fs := newFlagSet("doctor")
	if status, ok := parseFlags(fs, "doctor", args, std); !ok {
		return status
	}
	if status, ok := noArgs(fs, "doctor", std); !ok {
		return status
	}
	if !doctorReport(std.Out) {
		return exitFailure
	}
	return exitOK
}

func doctorPage() *cmdline.Page {
	return &cmdline.Page{
		Name:     "mcpsandbox doctor - check that this machine can confine MCP servers",
		Synopsis: []string{"mcpsandbox doctor"},
		Description: []string{
			"Checks every part of the default confinement that `mcpsandbox run` enforces, for the user running it: the kernel interfaces the sandbox is built on, the namespaces, user-namespace availability (some distributions, such as Ubuntu 24.04, restrict unprivileged user namespaces), the range of dynamic uids when running as root, seccomp support and the libseccomp version, the kernel's Landlock ABI and what it covers (none; filesystem only, ABI 2–5: FIFOs and sockets refused in grants; scoping, ABI 6+: abstract unix sockets and signals kept inside the sandbox, which matters under --net host), the cgroup mode (v1, v2 or hybrid) and whether the memory, pids and cpu controllers can be used; on cgroup v2, whether run can use the cgroup it is started in or asks systemd for a scope of its own, which manager that is (yours, or the system's for root), whether it answers and which controllers the scope offers (doctor makes the same request); then it starts a confined /bin/true exactly as run would. For each part it says whether it can be enforced and, when not, how to fix it.",
			"`mcpsandbox run` refuses to start a server when a part of the requested confinement cannot be enforced; doctor tells you beforehand.",
		},
		ExitStatus: []string{
			"0 when the default confinement can be enforced in full.",
			"1 when some part cannot; the report names it and the fix.",
			"2 when given an argument.",
		},
		Examples: []cmdline.Example{{Command: "mcpsandbox doctor", Text: "Check this machine (as the user that will run your MCP host):"}},
	}
}
