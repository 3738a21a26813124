// Package cgroups gives one server its cgroup: created beneath the
// supervisor's own, with memory (swap off), pids and cpu limits and a CPU
// weight below the host's (limits.go), joined at
// clone (v2) or by pid and thread (v1), killed whole, deleted, and read for
// OOM and pids-limit events, figures and the read-only view the server sees
// at Mount. It also sweeps cgroups that a killed supervisor left behind, and
// probes the host for `mcpsandbox doctor` (Info, HomeV2).
//
// Group hides which cgroup version the host runs: v1.go has one directory
// per controller (containerd's cgroup1; never the freezer, see signalAll), v2.go one
// directory under the supervisor's home, which v2_home.go finds or asks
// systemd for (sandbox/scope), moving the supervisor into SupervisorLeaf.
//
// It is a package of its own because all of that is host plumbing that the
// sandbox needs only through a handful of calls: the sandbox assembles the
// confinement, this package knows cgroupfs. It knows nothing of the
// sandbox, MCP or the supervisor, and its error messages name the fix.
package cgroups
