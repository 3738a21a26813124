//go:build linux && amd64

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// int80 issues an i386 system call through the 32-bit entry point.
func int80(nr, a1, a2, a3 uintptr) (r uintptr)

// legacyModeCalls are the mode-taking calls x86_64 has besides the *at
// forms; a filter has to cover them separately.
var legacyModeCalls = map[string]uintptr{
	"chmod": unix.SYS_CHMOD, "creat": unix.SYS_CREAT, "open": unix.SYS_OPEN, "mknod": unix.SYS_MKNOD,
}

const (
	i386Keyctl = 288        // keyctl on i386; 288 is accept4 on x86_64
	x32Bit     = 0x40000000 // __X32_SYSCALL_BIT
)

// runArchChild runs one foreign-ABI keyctl(KEYCTL_GET_KEYRING_ID, session)
// and prints its raw result. It runs in a child because a filter that kills
// foreign architectures kills the caller.
func runArchChild(mode string) int {
	var ret int64
	switch mode {
	case modeInt80:
		ret = int64(int32(int80(i386Keyctl, unix.KEYCTL_GET_KEYRING_ID, 0xfffffffd, 0)))
	case modeX32:
		r, _, errno := unix.RawSyscall(x32Bit+unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, uintptr(0xfffffffd), 0)
		ret = int64(r)
		if errno != 0 {
			ret = -int64(errno)
		}
	}
	fmt.Println(ret)
	return 0
}

// probeSeccompArchBypass: a filter that does not check the architecture lets
// an i386 syscall through under the number of an allowed x86_64 one, and x32
// numbers through unless the x32 bit is checked.
func probeSeccompArchBypass(a *Args, at *attempts) {
	for _, mode := range []string{modeInt80, modeX32} {
		what := map[string]string{modeInt80: "i386 keyctl via int $0x80", modeX32: "x32 keyctl"}[mode]
		exe, err := os.Executable()
		if err != nil {
			at.got("os.Executable: %v: unverifiable", err)
			return
		}
		out, err := exec.Command(exe, mode).Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				at.note("%s: child killed by %s", what, ws.Signal())
				continue
			}
		}
		if err != nil {
			at.got("%s: child failed: %v: unverifiable", what, err)
			continue
		}
		ret, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
		if err != nil {
			at.got("%s: unreadable child output %q", what, out)
			continue
		}
		if ret >= 0 {
			at.got("%s returned keyring %d", what, ret)
			continue
		}
		at.denied(what, unix.Errno(-ret))
	}
}

func probeRawIO(a *Args, at *attempts) {
	onLockedThread(func() {
		if err := unix.Ioperm(0x80, 1, 1); err == nil {
			unix.Ioperm(0x80, 1, 0)
			at.got("ioperm(0x80) succeeded")
		} else {
			at.denied("ioperm(0x80)", err)
		}
		if err := unix.Iopl(3); err == nil {
			unix.Iopl(0)
			at.got("iopl(3) succeeded")
		} else {
			at.denied("iopl(3)", err)
		}
	})
	rawDevices(at)
}
