//go:build linux

package main

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// probeTTYAccess: a server with a terminal could inject keystrokes into the
// user's shell (TIOCSTI). Its stdio must be pipes and /dev/tty must be absent.
// Nothing is ever injected here: a terminal found is already the finding.
func probeTTYAccess(a *Args, at *attempts) {
	for fd := 0; fd <= 2; fd++ {
		if _, err := unix.IoctlGetTermios(fd, unix.TCGETS); err == nil {
			at.got("fd %d is a terminal", fd)
		} else {
			at.note("fd %d: %s", fd, errText(err))
		}
	}
	for _, dev := range []string{"/dev/tty", "/dev/console", "/dev/tty0", "/dev/tty1", "/dev/ptmx", "/dev/pts/ptmx"} {
		fd, err := unix.Open(dev, unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			at.note("open %s: %s", dev, errText(err))
			continue
		}
		unix.Close(fd)
		at.got("opened %s", dev)
	}
}

// probeTIOCSTISeccomp issues TIOCSTI and TIOCLINUX on stdio, which are pipes:
// the kernel would answer ENOTTY, so EPERM can only come from the seccomp
// filter. The high-bit variant checks that the filter compares only the low
// 32 bits of the request, as the kernel does.
func probeTIOCSTISeccomp(a *Args, at *attempts) {
	c := byte(0)
	for _, req := range []struct {
		name string
		nr   uintptr
	}{
		{"TIOCSTI", unix.TIOCSTI},
		{"TIOCSTI|1<<32", unix.TIOCSTI | 1<<32},
		{"TIOCLINUX", unix.TIOCLINUX},
		{"TIOCLINUX|1<<32", unix.TIOCLINUX | 1<<32},
	} {
		for fd := uintptr(0); fd <= 2; fd++ {
			_, _, errno := unix.Syscall(unix.SYS_IOCTL, fd, req.nr, uintptr(unsafe.Pointer(&c)))
			what := fmt.Sprintf("ioctl(%d, %s)", fd, req.name)
			if errno == unix.EPERM {
				at.note("%s: EPERM", what)
				continue
			}
			at.got("%s not filtered: %s", what, errText(errno))
		}
	}
}
