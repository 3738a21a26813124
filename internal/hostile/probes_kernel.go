//go:build linux

package main

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Each probe here issues a syscall the default seccomp profile denies, with
// arguments that do nothing harmful if it gets through; the kernel's own
// answer for unprivileged callers is often "allowed", so the filter is what
// is being tested.

// rawDenied issues a raw syscall that must be refused.
func rawDenied(at *attempts, what string, nr uintptr, args ...uintptr) {
	rawDeniedFD(at, what, false, nr, args...)
}

// rawDeniedFD is rawDenied for calls that return a descriptor on success,
// which is closed again.
func rawDeniedFD(at *attempts, what string, returnsFD bool, nr uintptr, args ...uintptr) {
	var a [6]uintptr
	copy(a[:], args)
	r, _, errno := unix.Syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
	if errno == 0 && returnsFD {
		unix.Close(int(r))
	}
	at.denied(what, errnoErr(errno))
}

func cstr(s string) uintptr {
	b, _ := unix.BytePtrFromString(s)
	return uintptr(unsafe.Pointer(b))
}

func probeKeyctl(a *Args, at *attempts) {
	rawDenied(at, "keyctl(KEYCTL_GET_KEYRING_ID, session)", unix.SYS_KEYCTL,
		unix.KEYCTL_GET_KEYRING_ID, uintptr(0xfffffffd) /* KEY_SPEC_SESSION_KEYRING */, 0)
	payload := []byte("x")
	rawDenied(at, "add_key(user, process keyring)", unix.SYS_ADD_KEY,
		cstr("user"), cstr("hostile"), uintptr(unsafe.Pointer(&payload[0])), 1,
		uintptr(0xfffffffe) /* KEY_SPEC_PROCESS_KEYRING */)
	// No callout info: the kernel must not start a request-key upcall.
	rawDenied(at, "request_key(user, no callout)", unix.SYS_REQUEST_KEY,
		cstr("user"), cstr("hostile-none"), 0, 0)
}

func probeBPF(a *Args, at *attempts) {
	var attr [32]uint32
	attr[0], attr[1], attr[2], attr[3] = unix.BPF_MAP_TYPE_ARRAY, 4, 4, 1
	rawDeniedFD(at, "bpf(BPF_MAP_CREATE)", true, unix.SYS_BPF,
		unix.BPF_MAP_CREATE, uintptr(unsafe.Pointer(&attr[0])), unsafe.Sizeof(attr))
}

func probePerfEventOpen(a *Args, at *attempts) {
	attr := unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_SOFTWARE,
		Config: unix.PERF_COUNT_SW_CPU_CLOCK,
		Bits:   unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv | unix.PerfBitDisabled,
	}
	attr.Size = uint32(unsafe.Sizeof(attr))
	rawDeniedFD(at, "perf_event_open(sw cpu-clock, self)", true, unix.SYS_PERF_EVENT_OPEN,
		uintptr(unsafe.Pointer(&attr)), 0, ^uintptr(0) /* cpu -1 */, ^uintptr(0) /* no group */, unix.PERF_FLAG_FD_CLOEXEC)
}

func probeUserfaultfd(a *Args, at *attempts) {
	const uffdUserModeOnly = 1
	rawDeniedFD(at, "userfaultfd(UFFD_USER_MODE_ONLY)", true, unix.SYS_USERFAULTFD, unix.O_CLOEXEC|uffdUserModeOnly)
	if fd, err := unix.Open("/dev/userfaultfd", unix.O_RDWR|unix.O_CLOEXEC, 0); err == nil {
		unix.Close(fd)
		at.got("opened /dev/userfaultfd")
	} else {
		at.note("open /dev/userfaultfd: %s", errText(err))
	}
}

func probeIOUring(a *Args, at *attempts) {
	var params [120]byte // struct io_uring_params, zeroed
	rawDeniedFD(at, "io_uring_setup(1)", true, unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])))
	// With a bad descriptor the kernel would answer EBADF.
	rawDenied(at, "io_uring_enter(bad fd)", unix.SYS_IO_URING_ENTER, ^uintptr(0), 0, 0, 0, 0, 0)
	rawDenied(at, "io_uring_register(bad fd)", unix.SYS_IO_URING_REGISTER, ^uintptr(0), 0, 0, 0)
}

func probeKernelModules(a *Args, at *attempts) {
	if fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
		at.denied("finit_module(/dev/null)", unix.FinitModule(fd, "", 0))
		unix.Close(fd)
	}
	at.denied("init_module(1-byte image)", unix.InitModule([]byte{0}, ""))
	at.denied("delete_module(nonexistent)", unix.DeleteModule("hostile_nonexistent", unix.O_NONBLOCK))
}

func probeKexec(a *Args, at *attempts) {
	// One segment at NULL: a privileged caller gets EFAULT, never a load;
	// zero segments would mean "unload" and is never used.
	rawDenied(at, "kexec_load(1 segment at NULL)", unix.SYS_KEXEC_LOAD, 0, 1, 0, 0)
	rawDenied(at, "kexec_file_load(bad fds)", unix.SYS_KEXEC_FILE_LOAD, ^uintptr(0), ^uintptr(0), 0, 0, 0)
}

func probeReboot(a *Args, at *attempts) {
	// An unknown command: a privileged caller gets EINVAL, nothing reboots.
	rawDenied(at, "reboot(unknown command)", unix.SYS_REBOOT,
		unix.LINUX_REBOOT_MAGIC1, unix.LINUX_REBOOT_MAGIC2, 0xdeadbeef, 0)
}

func probeSwapAcct(a *Args, at *attempts) {
	rawDenied(at, "swapon(nonexistent)", unix.SYS_SWAPON, cstr("/nonexistent-hostile"), 0)
	rawDenied(at, "swapoff(nonexistent)", unix.SYS_SWAPOFF, cstr("/nonexistent-hostile"))
	at.denied("acct(nonexistent)", unix.Acct("/nonexistent-hostile"))
}

const addrNoRandomize = 0x0040000 // ADDR_NO_RANDOMIZE from <linux/personality.h>

func probePersonality(a *Args, at *attempts) {
	onLockedThread(func() {
		cur, _, _ := unix.Syscall(unix.SYS_PERSONALITY, 0xffffffff, 0, 0)
		_, _, errno := unix.Syscall(unix.SYS_PERSONALITY, cur|addrNoRandomize, 0, 0)
		if errno == 0 {
			unix.Syscall(unix.SYS_PERSONALITY, cur, 0, 0)
			at.got("personality(ADDR_NO_RANDOMIZE) succeeded: ASLR can be turned off for exec'd programs")
			return
		}
		at.denied("personality(ADDR_NO_RANDOMIZE)", errno)
	})
}
