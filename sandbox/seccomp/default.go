package seccomp

// The built-in seccomp profile for MCP servers (Node, Python, Go, and what
// they spawn). It starts from the facts of Docker's default allowlist, drops
// everything capability-gated (the server holds no capabilities) and the
// calls listed in deniedCalls, and answers clone3 with ENOSYS so libc and
// Go fall back to clone, whose namespace flags can be filtered.
//
// Names absent on the native architecture (e.g. open on arm64) are skipped.

import "golang.org/x/sys/unix"

// hotCalls are the calls MCP servers make most (relay I/O, event loops,
// allocation, locks). Under the kernel's per-syscall cache unconditional
// allows cost almost nothing; this order still decides the path length of
// the BPF when the cache cannot be used (e.g. a stacked filter with args).
var hotCalls = []string{
	"read", "write", "epoll_wait", "epoll_pwait", "epoll_pwait2", "epoll_ctl",
	"futex", "readv", "writev", "recvfrom", "sendto", "recvmsg", "sendmsg",
	"pread64", "pwrite64", "close", "mmap", "munmap", "madvise", "mprotect",
	"brk", "clock_gettime", "nanosleep", "clock_nanosleep", "sched_yield",
	"getpid", "gettid", "tgkill", "rt_sigaction", "rt_sigprocmask",
	"rt_sigreturn", "fstat", "newfstatat", "statx", "lseek", "fcntl",
	"poll", "ppoll", "pselect6", "select", "getrandom",
}

// allowedCalls are allowed unconditionally (besides hotCalls). Calls
// that create or set a file mode: modes.go.
var allowedCalls = []string{
	// files and directories
	"access", "faccessat", "faccessat2", "chdir", "fchdir", "getcwd",
	"chown", "fchown", "fchownat", "lchown", "close_range", "dup", "dup2", "dup3",
	"fadvise64", "fallocate", "fdatasync", "fsync", "sync", "syncfs",
	"sync_file_range", "flock", "ftruncate", "truncate", "getdents",
	"getdents64", "link", "linkat", "symlink", "symlinkat", "readlink",
	"readlinkat", "rename", "renameat", "renameat2", "unlink", "unlinkat",
	"mkdir", "mkdirat", "rmdir", "stat", "lstat",
	"statfs", "fstatfs", "umask", "utime", "utimes", "utimensat", "futimesat",
	"copy_file_range", "sendfile", "splice", "tee", "vmsplice", "readahead",
	"preadv", "preadv2", "pwritev", "pwritev2", "name_to_handle_at",
	"cachestat", "file_getattr", "file_setattr", "ioctl", // ioctl: see prologue
	"getxattr", "lgetxattr", "fgetxattr", "setxattr", "lsetxattr", "fsetxattr",
	"listxattr", "llistxattr", "flistxattr", "removexattr", "lremovexattr",
	"fremovexattr", "getxattrat", "setxattrat", "listxattrat", "removexattrat",
	"inotify_init", "inotify_init1", "inotify_add_watch", "inotify_rm_watch",
	// memory (PROT_EXEC stays allowed: V8 and other JITs need it)
	"mremap", "mincore", "msync", "mlock", "mlock2", "mlockall", "munlock",
	"munlockall", "remap_file_pages", "membarrier", "memfd_create",
	"memfd_secret", "pkey_alloc", "pkey_free", "pkey_mprotect", "mseal",
	"map_shadow_stack",
	// processes and threads (clone, personality: conditional rules below)
	"fork", "vfork", "execve", "execveat", "exit", "exit_group", "wait4",
	"waitid", "kill", "tkill", "getppid", "getpgid", "setpgid", "getpgrp",
	"getsid", "setsid", "set_tid_address", "set_robust_list",
	"get_robust_list", "rseq", "prctl", "arch_prctl", "capget", "capset",
	"getpriority", "setpriority", "sched_getaffinity", "sched_setaffinity",
	"sched_getattr", "sched_setattr", "sched_getparam", "sched_setparam",
	"sched_getscheduler", "sched_setscheduler", "sched_get_priority_max",
	"sched_get_priority_min", "sched_rr_get_interval", "ioprio_get",
	"ioprio_set", "getrlimit", "setrlimit", "prlimit64", "getrusage", "times",
	"sysinfo", "uname", "getcpu", "pidfd_open", "pidfd_send_signal",
	"process_mrelease", "seccomp", "landlock_create_ruleset",
	"landlock_add_rule", "landlock_restrict_self", "restart_syscall", "pause",
	"alarm", "getitimer", "setitimer",
	// credentials (without capabilities only within the process's own ids)
	"getuid", "geteuid", "getgid", "getegid", "getgroups", "getresuid",
	"getresgid", "setuid", "setgid", "setreuid", "setregid", "setresuid",
	"setresgid", "setgroups", "setfsuid", "setfsgid",
	// signals
	"rt_sigpending", "rt_sigsuspend", "rt_sigtimedwait", "rt_sigqueueinfo",
	"rt_tgsigqueueinfo", "sigaltstack", "signalfd", "signalfd4",
	// time (reading and timers only)
	"clock_getres", "gettimeofday", "time", "timer_create", "timer_delete",
	"timer_gettime", "timer_settime", "timer_getoverrun", "timerfd_create",
	"timerfd_gettime", "timerfd_settime",
	// event loops and pipes (kernel AIO and io_uring: see below)
	"epoll_create", "epoll_create1", "eventfd", "eventfd2", "pipe", "pipe2",
	"futex_waitv", "futex_wake", "futex_wait", "futex_requeue",
	// System V and POSIX IPC (private: the server has its own IPC namespace)
	"msgctl", "msgget", "msgrcv", "msgsnd", "semctl", "semget", "semop",
	"semtimedop", "shmat", "shmctl", "shmdt", "shmget", "mq_getsetattr",
	"mq_notify", "mq_open", "mq_timedreceive", "mq_timedsend", "mq_unlink",
	// sockets (socket and socketpair: conditional rules below)
	"bind", "connect", "listen", "accept", "accept4",
	"getsockname", "getpeername", "getsockopt", "setsockopt", "shutdown",
	"recvmmsg", "sendmmsg",
}

// deniedCalls are never allowed by the default profile. The list is not
// needed to deny them (the default action does); it documents the decision,
// is checked against the allowlists by the tests, and counts as "known" for
// the ENOSYS answer to syscalls newer than the profile.
var deniedCalls = []string{
	// reading or changing other processes
	"ptrace", "process_vm_readv", "process_vm_writev", "process_madvise",
	"kcmp", "pidfd_getfd",
	// kernel keyrings, BPF, perf, userfaultfd, io_uring (EPERM; libuv falls back)
	"keyctl", "add_key", "request_key", "bpf", "perf_event_open",
	"userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
	// mounts and namespaces (clone with CLONE_NEW*: conditional rule below)
	"mount", "umount2", "fsopen", "fsmount", "fsconfig", "fspick",
	"move_mount", "open_tree", "open_tree_attr", "mount_setattr",
	"statmount", "listmount", "pivot_root", "chroot", "unshare", "setns",
	// the machine: kernels, modules, power, swap, clocks, names, quotas
	"kexec_load", "kexec_file_load", "init_module", "finit_module",
	"delete_module", "reboot", "swapon", "swapoff", "settimeofday",
	"clock_settime", "clock_adjtime", "adjtimex", "sethostname",
	"setdomainname", "quotactl", "quotactl_fd", "acct", "syslog", "vhangup",
	// capability-gated or obsolete
	"open_by_handle_at", "fanotify_init", "iopl", "ioperm", "modify_ldt",
	"lookup_dcookie", "uselib", "ustat", "sysfs", "_sysctl", "nfsservctl",
	"mbind", "set_mempolicy", "get_mempolicy", "set_mempolicy_home_node",
	"migrate_pages", "move_pages", "lsm_get_self_attr", "lsm_set_self_attr",
	"lsm_list_modules",
}

// unimplementedCalls are answered ENOSYS, so that callers take their
// fallback. clone3: libc and Go fall back to clone, whose namespace flags
// can be filtered. Native AIO: io_setup's events come from the machine-wide
// fs.aio-max-nr, which one server could take whole (a cap on nr_events per
// call would not bound the total); glibc's POSIX AIO uses threads, and
// libuv and Python never use io_setup. io_uring is denied (EPERM) above.
var unimplementedCalls = []string{
	"clone3", "io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents", "io_pgetevents",
}

// Argument values the conditional rules use.
const (
	cloneNewFlags = 0x7E020000 // CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET
	personaLinux  = 0x0        // PER_LINUX
	personaQuery  = 0xffffffff // reads the persona without changing it
	afNetlink     = 16
	netlinkRoute  = 0
	low32         = 0xffffffff
	sockTypeMask  = 0xf // SOCK_TYPE_MASK
)

// addDefaultProfile fills b with the built-in profile, whose sockets are
// those of families (checked by the caller) and NETLINK_ROUTE.
func addDefaultProfile(b *builder, families Families) error {
	for i, name := range hotCalls {
		// Higher priority for earlier entries; only used without the tree.
		if err := b.allowHot(name, uint8(255-i)); err != nil {
			return err
		}
	}
	for _, name := range allowedCalls {
		if err := b.allow(name); err != nil {
			return err
		}
	}
	for _, name := range deniedCalls {
		b.know(name)
	}
	// socketpair runs each family's create code as socket does, so it
	// follows the same rule.
	for _, call := range []string{"socket", "socketpair"} {
		for _, fam := range families.list() {
			if fam == inetQueriesBit {
				continue // below, socket only
			}
			if err := b.allowIf(call, argMaskedEq(0, low32, uint64(fam))); err != nil {
				return err
			}
		}
		if err := b.allowIf(call, argMaskedEq(0, low32, afNetlink), argMaskedEq(2, low32, netlinkRoute)); err != nil {
			return err
		}
	}
	if families&InetQueries != 0 {
		for _, fam := range []uint64{unix.AF_INET, unix.AF_INET6} {
			// The type's low bits; SOCK_NONBLOCK and SOCK_CLOEXEC may be set.
			err := b.allowIf("socket", argMaskedEq(0, low32, fam), argMaskedEq(1, sockTypeMask, unix.SOCK_DGRAM), argMaskedEq(2, low32, 0))
			if err != nil {
				return err
			}
		}
	}
	// clone's flags are a full unsigned long; any namespace flag is refused.
	if err := addModeRules(b); err != nil {
		return err
	}
	if err := b.allowIf("clone", argMaskedEq(0, cloneNewFlags, 0)); err != nil {
		return err
	}
	for _, persona := range []uint64{personaLinux, personaQuery} {
		if err := b.allowIf("personality", argMaskedEq(0, low32, persona)); err != nil {
			return err
		}
	}
	for _, name := range unimplementedCalls {
		if err := b.answerENOSYS(name); err != nil {
			return err
		}
	}
	return nil
}
