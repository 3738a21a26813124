package seccomp

// The probes: each makes one system call the way runtimes do (or an escape
// would), so that its result shows the filter's decision.

import (
	"fmt"
	"os"
	"os/exec"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sys makes a raw syscall and returns its errno.
func sys(nr uintptr, args ...uintptr) error {
	var a [6]uintptr
	copy(a[:], args)
	_, _, e := unix.RawSyscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
	return errnoOrNil(e)
}

// sysFd makes a raw syscall that returns a descriptor, and closes it.
func sysFd(nr uintptr, args ...uintptr) error {
	var a [6]uintptr
	copy(a[:], args)
	r, _, e := unix.RawSyscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
	if e != 0 {
		return e
	}
	unix.Close(int(r))
	return nil
}

func cstr(s string) uintptr {
	b, _ := unix.BytePtrFromString(s)
	return uintptr(unsafe.Pointer(b))
}

// onPty runs an ioctl with a pointer to one byte on a fresh pty master.
func onPty(cmd uintptr) error {
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open /dev/ptmx: %v", err) // not an errno: not the filter's doing
	}
	defer unix.Close(fd)
	c := byte(0)
	return sys(unix.SYS_IOCTL, uintptr(fd), cmd, uintptr(unsafe.Pointer(&c)))
}

func socketProbe(family, typ, proto uint64) func() error {
	return func() error {
		return sysFd(unix.SYS_SOCKET, uintptr(family), uintptr(typ|unix.SOCK_CLOEXEC), uintptr(proto))
	}
}

// socketpairProbe asks for a pair in family; only AF_UNIX has pairs, so
// any other family that gets past the filter answers EOPNOTSUPP (ENOTSUP), after its
// create code ran.
func socketpairProbe(family, typ, proto uint64) func() error {
	return func() error {
		var fds [2]int32
		err := sys(unix.SYS_SOCKETPAIR, uintptr(family), uintptr(typ|unix.SOCK_CLOEXEC), uintptr(proto), uintptr(unsafe.Pointer(&fds)))
		if err == nil {
			unix.Close(int(fds[0]))
			unix.Close(int(fds[1]))
		}
		return err
	}
}

// cloneProbe asks for clone with a namespace flag plus CLONE_THREAD without
// CLONE_SIGHAND: the kernel refuses that with EINVAL, so a call that gets
// past the filter never creates anything.
func cloneProbe(flag uintptr) func() error {
	return func() error { return sys(unix.SYS_CLONE, flag|unix.CLONE_THREAD) }
}

const highBits = 0xffffffff00000000 // garbage in the upper half of an int argument

const fionbio = 0x5421 // asm-generic; what libuv uses to set O_NONBLOCK

var atFdcwd = uintptr(unix.AT_FDCWD & 0xffffffff) // the kernel reads an int

var seccompProbes = joined(seccompCallProbes, seccompModeProbes)

// joined is the union of maps with distinct keys.
func joined[V any](ms ...map[string]V) map[string]V {
	out := map[string]V{}
	for _, m := range ms {
		for k, v := range m {
			if _, dup := out[k]; dup {
				panic("seccomp probes: " + k + " defined twice")
			}
			out[k] = v
		}
	}
	return out
}

var seccompCallProbes = map[string]func() error{
	// must work
	"getpid": func() error { return sys(unix.SYS_GETPID) },
	"open_read": func() error {
		fd, err := unix.Open("/proc/self/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		_, err = unix.Read(fd, make([]byte, 64))
		return err
	},
	"mmap_exec": func() error {
		m, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE|unix.PROT_EXEC, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			return err
		}
		return unix.Munmap(m)
	},
	"mprotect_exec": func() error {
		m, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			return err
		}
		defer unix.Munmap(m)
		return unix.Mprotect(m, unix.PROT_READ|unix.PROT_EXEC)
	},
	"fork_exec": func() error { return exec.Command("/bin/true").Run() },
	"statx": func() error {
		var st unix.Statx_t
		return unix.Statx(unix.AT_FDCWD, "/", 0, unix.STATX_BASIC_STATS, &st)
	},
	"getrandom":   func() error { _, err := unix.Getrandom(make([]byte, 8), 0); return err },
	"close_range": func() error { return sys(unix.SYS_CLOSE_RANGE, 100000, 100001, 0) },
	"faccessat2":  func() error { return sys(unix.SYS_FACCESSAT2, atFdcwd, cstr("/"), unix.F_OK, unix.AT_EACCESS) },
	"membarrier":  func() error { return sys(unix.SYS_MEMBARRIER, 0, 0, 0) }, // MEMBARRIER_CMD_QUERY
	"pidfd_open":  func() error { return sysFd(unix.SYS_PIDFD_OPEN, uintptr(os.Getpid()), 0) },
	"eventfd2":    func() error { return sysFd(unix.SYS_EVENTFD2, 0, unix.EFD_CLOEXEC) },
	"epoll_create1": func() error {
		return sysFd(unix.SYS_EPOLL_CREATE1, unix.EPOLL_CLOEXEC)
	},
	"memfd_create": func() error { return sysFd(unix.SYS_MEMFD_CREATE, cstr("probe"), unix.MFD_CLOEXEC) },
	"prlimit64": func() error {
		var old unix.Rlimit
		return unix.Prlimit(0, unix.RLIMIT_NOFILE, nil, &old)
	},
	"rseq":        func() error { return sys(unix.SYS_RSEQ, 0, 0, 0, 0) },                                              // EINVAL when reached
	"execveat":    func() error { return sys(unix.SYS_EXECVEAT, ^uintptr(0), cstr(""), 0, 0, unix.AT_EMPTY_PATH) },     // EBADF when reached
	"mkdir":       func() error { return unix.Mkdir("/nonexistent-mcpsandbox/dir", 0o755) },                            // ENOENT when reached
	"fchmodat2":   func() error { return sys(452, atFdcwd, cstr("/nonexistent-mcpsandbox"), 0, 0) },                    // ENOENT when reached
	"mseal":       func() error { return sys(462, 0, 0, 0) },                                                           // zero length: a no-op
	"sigaltstack": func() error { var st [64]byte; return sys(unix.SYS_SIGALTSTACK, 0, uintptr(unsafe.Pointer(&st))) }, // reads stack_t
	"ioctl_tiocgwinsz": func() error {
		fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open /dev/ptmx: %v", err)
		}
		defer unix.Close(fd)
		_, err = unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ)
		return err
	},
	"ioctl_fionbio": func() error {
		var p [2]int
		if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
			return err
		}
		defer unix.Close(p[0])
		defer unix.Close(p[1])
		return unix.IoctlSetPointerInt(p[0], fionbio, 1)
	},
	"personality_query":    func() error { return sys(unix.SYS_PERSONALITY, 0xffffffff) },
	"personality_linux":    func() error { return sys(unix.SYS_PERSONALITY, 0) },
	"socket_unix":          socketProbe(unix.AF_UNIX, unix.SOCK_STREAM, 0),
	"socket_unix_highbits": socketProbe(highBits|unix.AF_UNIX, unix.SOCK_STREAM, 0),
	"socket_netlink_route": socketProbe(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE),
	"socketpair": func() error {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
		return err
	},

	// depend on the network setting
	"socketpair_inet":      socketpairProbe(unix.AF_INET, unix.SOCK_STREAM, 0),
	"socket_inet":          socketProbe(unix.AF_INET, unix.SOCK_STREAM, 0),
	"socket_inet6":         socketProbe(unix.AF_INET6, unix.SOCK_DGRAM, 0),
	"socket_inet_highbits": socketProbe(highBits|unix.AF_INET, unix.SOCK_STREAM, 0),
	"socket_inet_dgram":    socketProbe(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK, 0),
	"socket_inet6_stream":  socketProbe(unix.AF_INET6, unix.SOCK_STREAM, 0),
	"socket_inet_icmp":     socketProbe(unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_ICMP),
	"socket_inet_udplite":  socketProbe(unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_UDPLITE),

	// must be refused
	"socket_netlink_audit":     socketProbe(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT),
	"socket_packet":            socketProbe(unix.AF_PACKET, unix.SOCK_DGRAM, 0),
	"socket_vsock":             socketProbe(unix.AF_VSOCK, unix.SOCK_STREAM, 0),
	"socketpair_netlink_audit": socketpairProbe(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT),
	"socketpair_vsock":         socketpairProbe(unix.AF_VSOCK, unix.SOCK_STREAM, 0),
	// kernel AIO: unimplemented to the server (EINVAL when reached: no
	// events, no context)
	"io_setup":          func() error { return sys(unix.SYS_IO_SETUP, 0, 0) },
	"io_submit":         func() error { return sys(unix.SYS_IO_SUBMIT, 0, 0, 0) },
	"ptrace":            func() error { return sys(unix.SYS_PTRACE, unix.PTRACE_PEEKUSR, 0x3fffffff, 0, 0) }, // ESRCH when reached
	"process_vm_readv":  func() error { return sys(unix.SYS_PROCESS_VM_READV, uintptr(os.Getpid()), 0, 0, 0, 0, 0) },
	"process_vm_writev": func() error { return sys(unix.SYS_PROCESS_VM_WRITEV, uintptr(os.Getpid()), 0, 0, 0, 0, 0) },
	"kcmp":              func() error { return sys(unix.SYS_KCMP, uintptr(os.Getpid()), uintptr(os.Getpid()), 0, 0, 0) },
	"pidfd_getfd":       func() error { return sys(unix.SYS_PIDFD_GETFD, ^uintptr(0), 0, 0) },
	"keyctl":            func() error { return sys(unix.SYS_KEYCTL, 9999) },
	"add_key":           func() error { return sys(unix.SYS_ADD_KEY, 0, 0, 0, 0, 0) },
	"request_key":       func() error { return sys(unix.SYS_REQUEST_KEY, 0, 0, 0, 0) },
	"bpf":               func() error { return sys(unix.SYS_BPF, 9999, 0, 0) },
	"perf_event_open":   func() error { return sys(unix.SYS_PERF_EVENT_OPEN, 0, 0, ^uintptr(0), ^uintptr(0), 0) },
	"userfaultfd":       func() error { return sys(unix.SYS_USERFAULTFD, 0xffff) }, // EINVAL when reached
	"io_uring_setup":    func() error { return sys(unix.SYS_IO_URING_SETUP, 1, 0) },
	"io_uring_enter":    func() error { return sys(unix.SYS_IO_URING_ENTER, ^uintptr(0), 0, 0, 0, 0, 0) },
	"io_uring_register": func() error { return sys(unix.SYS_IO_URING_REGISTER, ^uintptr(0), 0, 0, 0) },
	"mount": func() error {
		return unix.Mount("none", "/nonexistent-mcpsandbox", "tmpfs", 0, "")
	},
	"umount2":                func() error { return unix.Unmount("/nonexistent-mcpsandbox", 0) },
	"pivot_root":             func() error { return unix.PivotRoot("/nonexistent-mcpsandbox-a", "/nonexistent-mcpsandbox-b") },
	"chroot":                 func() error { return unix.Chroot("/nonexistent-mcpsandbox") },
	"fsopen":                 func() error { return sys(unix.SYS_FSOPEN, 0, 0) },
	"fsmount":                func() error { return sys(unix.SYS_FSMOUNT, ^uintptr(0), 0, 0) },
	"fsconfig":               func() error { return sys(unix.SYS_FSCONFIG, ^uintptr(0), 0, 0, 0, 0) },
	"fspick":                 func() error { return sys(unix.SYS_FSPICK, ^uintptr(0), 0, 0xffffffff) },
	"open_tree":              func() error { return sys(unix.SYS_OPEN_TREE, ^uintptr(0), 0, 0xffffffff) },
	"move_mount":             func() error { return sys(unix.SYS_MOVE_MOUNT, ^uintptr(0), 0, ^uintptr(0), 0, 0xffffffff) },
	"mount_setattr":          func() error { return sys(unix.SYS_MOUNT_SETATTR, ^uintptr(0), 0, 0xffffffff, 0, 0) },
	"unshare_none":           func() error { return unix.Unshare(0) },
	"unshare_user":           func() error { return unix.Unshare(unix.CLONE_NEWUSER) },
	"setns":                  func() error { return unix.Setns(-1, 0) },
	"clone_newns":            cloneProbe(unix.CLONE_NEWNS),
	"clone_newuser":          cloneProbe(unix.CLONE_NEWUSER),
	"clone_newpid":           cloneProbe(unix.CLONE_NEWPID),
	"clone_newnet":           cloneProbe(unix.CLONE_NEWNET),
	"clone_newipc":           cloneProbe(unix.CLONE_NEWIPC),
	"clone_newuts":           cloneProbe(unix.CLONE_NEWUTS),
	"clone_newcgroup":        cloneProbe(unix.CLONE_NEWCGROUP),
	"clone3":                 func() error { return sys(unix.SYS_CLONE3, 0, 0) }, // EINVAL when reached
	"ioctl_tiocsti":          func() error { return onPty(unix.TIOCSTI) },
	"ioctl_tiocsti_highbits": func() error { return onPty(highBits | unix.TIOCSTI) },
	"ioctl_tioclinux":        func() error { return onPty(unix.TIOCLINUX) },
	"personality_odd": func() error { // READ_IMPLIES_EXEC; undone if it got through
		err := sys(unix.SYS_PERSONALITY, 0x0400000) // READ_IMPLIES_EXEC
		sys(unix.SYS_PERSONALITY, 0)
		return err
	},
	"personality_linux32": func() error {
		err := sys(unix.SYS_PERSONALITY, 0x0008) // PER_LINUX32
		sys(unix.SYS_PERSONALITY, 0)
		return err
	},
	"settimeofday":  func() error { return sys(unix.SYS_SETTIMEOFDAY, 0, 0) }, // both NULL: no change
	"clock_settime": func() error { return sys(unix.SYS_CLOCK_SETTIME, unix.CLOCK_MONOTONIC, 0) },
	"clock_adjtime": func() error { return sys(unix.SYS_CLOCK_ADJTIME, unix.CLOCK_REALTIME, 0) },
	"adjtimex":      func() error { return sys(unix.SYS_ADJTIMEX, 0) },
	"sethostname":   func() error { return sys(unix.SYS_SETHOSTNAME, cstr("x"), 100000) },
	"setdomainname": func() error { return sys(unix.SYS_SETDOMAINNAME, cstr("x"), 100000) },

	// refused; the arguments are invalid too, but these are never tried
	// without a refusing filter (see probesNeverUnfiltered)
	"kexec_load":      func() error { return sys(unix.SYS_KEXEC_LOAD, 0, 0, 0, 0xff0) },
	"kexec_file_load": func() error { return sys(unix.SYS_KEXEC_FILE_LOAD, ^uintptr(0), ^uintptr(0), 0, 0, 0xffffffff) },
	"init_module":     func() error { return sys(unix.SYS_INIT_MODULE, 0, 0, 0) },
	"finit_module":    func() error { return sys(unix.SYS_FINIT_MODULE, ^uintptr(0), 0, 0) },
	"delete_module":   func() error { return sys(unix.SYS_DELETE_MODULE, cstr("mcpsandbox_no_such_module"), unix.O_NONBLOCK) },
	"reboot":          func() error { return sys(unix.SYS_REBOOT, 0, 0, 0, 0) }, // bad magic
	"swapon":          func() error { return sys(unix.SYS_SWAPON, cstr("/nonexistent-mcpsandbox"), 0) },
	"swapoff":         func() error { return sys(unix.SYS_SWAPOFF, cstr("/nonexistent-mcpsandbox")) },
}

// probesNeverUnfiltered touch the machine as a whole; they only run where a
// filter is expected to refuse them.
var probesNeverUnfiltered = []string{
	"kexec_load", "kexec_file_load", "init_module", "finit_module",
	"delete_module", "reboot", "swapon", "swapoff",
}
