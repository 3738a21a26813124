// Package sandbox starts one program confined: its own namespaces, a minimal
// root, a non-root user, no capabilities, seccomp, Landlock where the
// kernel has it, cgroup limits and rlimits.
// It knows nothing of MCP; the supervisor hands it a Spec and gets back a
// Process with three pipes.
//
// Here is the confinement's assembly, in Go: resolving a Spec into the init
// stage's configuration (config.go; Describe, in describe.go, says from the
// same values what a Spec will get, for policy explain; grants_sockets.go
// finds the sockets in the grants the init stage masks; program.go what
// of the server's program in a writable grant it pins), the user, the seccomp program, the
// cgroup and the idmapped grants, then starting the init stage and reading
// its reports (confined.go). The init stage itself is C, in
// internal/initstage with its wire encoding and the constants C and Go
// share: the supervisor re-executes its own binary (argv[0] initstage.Arg0, mcpsandbox-init)
// inside the new namespaces, or adopts one pre-forked at start-up, and
// initstage's ELF constructor runs it before any Go runtime starts. It
// builds the root file system and forks the server, which takes its
// credentials and loads seccomp right before exec, and stays behind as PID
// 1 of the server's pid namespace: it forwards signals, reaps orphans and
// reports how the server ended. Any binary linking this package can start
// confined servers.
//
// A Spec's Network (network.go) is one decision the parts must agree on:
// whether the init stage unshares the network namespace (and brings up lo),
// which socket families the seccomp program allows, and which /etc files
// describe the network (etc.go); the uid identity counts it too. With
// NetEgress the supervisor also configures the server's namespace and
// listens in it before the server starts (capture.go), with sockets the
// init stage makes there and hands over.
//
// Landlock (landlock.go) is defense in depth where the kernel has it: the
// supervisor creates each server's ruleset from the kernel's ABI, and the
// init stage adds the rules naming places inside and applies it right
// before seccomp; doctor (doctor_landlock.go) names the ABI and what stays
// open without it.
//
// The seccomp program is compiled by package sandbox/seccomp (profiles,
// Docker/OCI import, the pre-compiled built-in profile), and the server's
// cgroup (both versions, the home on cgroup v2, doctor's cgroup probe) is
// sandbox/cgroups': this package only hands the bytes, the join files, the
// fd and the view to the init stage.
package sandbox
