//go:build linux

package main

import (
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Kernel budgets shared beyond the sandbox: machine-wide ones must be out
// of reach, per-user ones capped for the sandbox before the host user's
// runs out. Each probe releases what it took before it returns.

// probeAIOBudget: io_setup's events come from fs.aio-max-nr, one budget for
// the whole machine; asking for 65536 of them would take it.
func probeAIOBudget(a *Args, at *attempts) {
	var ctx uint64
	_, _, errno := unix.Syscall(unix.SYS_IO_SETUP, 65536, uintptr(unsafe.Pointer(&ctx)), 0)
	if errno == 0 {
		unix.Syscall(unix.SYS_IO_DESTROY, uintptr(ctx), 0, 0)
	}
	at.denied("io_setup(65536)", errnoErr(errno))
}

// probeInotifyShare takes inotify instances until refused. The refusal
// must come from a limit of the sandbox's own user namespace (shown in its
// /proc/sys/user), not from the host user's budget above it, which the
// host user's other programs share.
func probeInotifyShare(a *Args, at *attempts) {
	shown, err := os.ReadFile("/proc/sys/user/max_inotify_instances")
	if err != nil {
		at.got("cannot read the sandbox's inotify limit: %s", errText(err))
		return
	}
	limit, _ := strconv.Atoi(strings.TrimSpace(string(shown)))
	var fds []int
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for len(fds) <= limit && len(fds) < 1<<16 {
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
		if err != nil {
			if len(fds) < limit {
				at.got("inotify_init refused after %d instances (%s), below the sandbox's own limit %d: the host user's budget ran out", len(fds), errText(err), limit)
				return
			}
			at.note("inotify_init refused after %d instances (%s), the sandbox's own limit", len(fds), errText(err))
			return
		}
		fds = append(fds, fd)
	}
	at.got("%d inotify instances, past the sandbox's limit %d", len(fds), limit)
}

// probeProcHostInfo: /proc/locks and /proc/key-users are not namespaced;
// they list the host's file locks (holders' pids and inodes) and uids.
func probeProcHostInfo(a *Args, at *attempts) {
	for _, p := range []string{"/proc/locks", "/proc/key-users"} {
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			at.note("%s: %s", p, errText(err))
		case fi.Mode()&os.ModeCharDevice != 0:
			at.note("%s: masked (a device node)", p)
		case fi.Mode().IsRegular() && !sameFilesystem(p, "/proc/self"):
			if data, err := os.ReadFile(p); err == nil && len(data) > 0 {
				at.got("%s is covered by a file that is not empty (%d bytes)", p, len(data))
			} else {
				at.note("%s: masked (an empty file of another file system)", p)
			}
		default:
			data, _ := os.ReadFile(p)
			at.got("%s is the host's (%d bytes)", p, len(data))
		}
	}
}

// probeSocketpairFamilies: socketpair runs a family's create code as
// socket does, so the families socket refuses must be refused here too.
func probeSocketpairFamilies(a *Args, at *attempts) {
	for _, f := range []struct {
		what               string
		domain, typ, proto int
	}{
		{"AF_NETLINK, NETLINK_AUDIT", unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT},
		{"AF_PACKET, SOCK_DGRAM", unix.AF_PACKET, unix.SOCK_DGRAM, 0},
		{"AF_VSOCK", unix.AF_VSOCK, unix.SOCK_STREAM, 0},
		{"AF_ALG", unix.AF_ALG, unix.SOCK_SEQPACKET, 0},
		{"AF_INET, SOCK_STREAM", unix.AF_INET, unix.SOCK_STREAM, 0},
	} {
		fds, err := unix.Socketpair(f.domain, f.typ|unix.SOCK_CLOEXEC, f.proto)
		if err == nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
		at.denied("socketpair("+f.what+")", err)
	}
}
