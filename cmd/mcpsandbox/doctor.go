package main

import (
	"fmt"
	"io"
)

// doctorReport checks whether this machine can enforce the default
// confinement, writes what it found to w and reports whether all is well.
//
// TODO(sandbox): switch to sandbox.Doctor() once it exists.
var doctorReport = func(w io.Writer) bool {
	fmt.Fprintln(w, "doctor: the sandbox checks are not built into this mcpsandbox yet")
	return false
}

func doctorCommand(args []string, io stdio) int {
	fs := newFlagSet("doctor")
	if status, ok := parseFlags(fs, "doctor", args, io); !ok {
		return status
	}
	if status, ok := noArgs(fs, "doctor", io); !ok {
		return status
	}
	if !doctorReport(io.Out) {
		return exitFailure
	}
	return exitOK
}

func doctorPage() *manPage {
	return &manPage{
		Name:     "mcpsandbox doctor - check that this machine can confine MCP servers",
		Synopsis: []string{"mcpsandbox doctor"},
		Description: []string{
			"Checks, without starting a server, every part of the default confinement that `mcpsandbox run` enforces: cgroup mode (v1, v2 or hybrid) and the memory, pids and cpu controllers, user-namespace availability (some distributions, such as Ubuntu 24.04, restrict unprivileged user namespaces), seccomp support and the libseccomp version, and the namespaces run needs. For each part it says whether it can be enforced and, when not, how to fix it.",
			"`mcpsandbox run` refuses to start a server when a part of the requested confinement cannot be enforced; doctor tells you beforehand.",
		},
		ExitStatus: []string{
			"0 when the default confinement can be enforced in full.",
			"1 when some part cannot; the report names it and the fix.",
			"2 when given an argument.",
		},
		Examples: []example{{"mcpsandbox doctor", "Check this machine (as the user that will run your MCP host):"}},
	}
}
