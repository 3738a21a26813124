// Package seccomp turns a seccomp profile into the BPF program a confined
// server runs under: the built-in default profile for MCP servers
// (default.go, modes.go), Docker/OCI JSON profiles (docker*.go), their
// compilation with libseccomp plus a hand-written prologue (compile.go,
// builder.go, prologue.go), the built-in profile pre-compiled for amd64
// (embedded/), and what doctor and version report of it (info.go,
// version.go).
//
// It is a package of its own because compiling is the supervisor's side of
// seccomp and needs nothing of the sandbox: it takes a profile name, the
// socket families to allow (families.go; which ones is the sandbox's network
// mode's decision) and whether to only log, and returns bytes, which package
// sandbox hands to its init stage to load before exec. It is also the only package that imports
// libseccomp-golang (cgo): the commands ask it for the library's version.
package seccomp
