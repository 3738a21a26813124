// Package initstage is the init stage of a sandbox, PID 1 of its
// namespaces, and the supervisor's side of talking to it: the C program
// (init_*.c, spawn.c) with the ELF constructor that runs it before any Go
// runtime (zygote.c), the wire encoding of its configuration (wire.go), its
// reports (report.go), starting it by re-exec (exec.go) or adopting the one
// pre-forked at start-up (zygote.go), and the constants and path rule C and
// Go share, defined once in init.h and read here through cgo.
//
// It is a package of its own because it is the one place where C and Go
// meet over a protocol: keeping both sides and their shared header together
// lets cgo hold them to one definition, builds the C with warnings as
// errors, and leaves package sandbox the confinement's assembly (resolving
// a Spec, users, seccomp, cgroups) in Go alone. Only package sandbox
// imports it; linking it links the constructor into the binary.
package initstage
