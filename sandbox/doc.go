// Package sandbox starts one program confined: its own namespaces, a minimal
// root, a non-root user, no capabilities, seccomp, cgroup limits and rlimits.
// It knows nothing of MCP; the supervisor hands it a Spec and gets back a
// Process with three pipes.
//
// Confinement happens in an init stage: the mcpsandbox binary re-executes
// itself (argv[0] InitArg0) inside the new namespaces, reads its
// configuration from a pipe, builds the root file system, and forks the
// server through a small C routine (spawn.c) that does the per-process steps
// and loads seccomp right before exec. The init stage stays behind as PID 1
// of the server's pid namespace: it forwards signals, reaps orphans and
// reports how the server ended. Every binary that may start confined servers
// (mcpsandbox itself, test binaries) must call InitStage first thing in main.
package sandbox
