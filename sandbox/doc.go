// Package sandbox starts one program confined: its own namespaces, a minimal
// root, a non-root user, no capabilities, seccomp, cgroup limits and rlimits.
// It knows nothing of MCP; the supervisor hands it a Spec and gets back a
// Process with three pipes.
//
// Confinement happens in an init stage written in C (init_*.c): the
// supervisor re-executes its own binary (argv[0] InitArg0) inside the new
// namespaces, or adopts one pre-forked at start-up (zygote.c), and the
// package's ELF constructor runs it before any Go runtime starts. It reads
// its configuration from a pipe (wire.go encodes it; the supervisor resolves
// everything first), builds the root file system, and forks the server
// (spawn.c), which takes its credentials and loads seccomp right before
// exec. The init stage stays behind as PID 1 of the server's pid namespace:
// it forwards signals, reaps orphans and reports how the server ended. Any
// binary linking this package can start confined servers.
//
// The seccomp program is compiled on the supervisor's side by package
// sandbox/seccomp (profiles, Docker/OCI import, the pre-compiled built-in
// profile); this package only hands the bytes to the init stage.
// The server's cgroup (both versions, the home on cgroup v2, doctor's cgroup
// probe) lives in sandbox/cgroups; this package only creates one per server
// and hands its join files, fd and view to the init stage.
package sandbox
