package main

import "syscall"

// newMountNamespace starts a process in a mount namespace of its own (Go
// makes its mounts private), so what it mounts leaves the host's alone.
func newMountNamespace() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
}
