package seccomp

import (
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// archFacts holds the native-architecture facts the hand-written part of
// the filter (prologue.go) needs. Only architectures using the
// asm-generic ioctl numbers and the unified syscall numbering above 424 are
// listed, so the tables below are valid for each of them.
type archFacts struct {
	auditArch    uint32 // seccomp_data.arch of native syscalls
	littleEndian bool   // where the low 32 bits of an argument sit
}

var arches = map[string]archFacts{
	"amd64":   {auditArch: unix.AUDIT_ARCH_X86_64, littleEndian: true},
	"arm64":   {auditArch: unix.AUDIT_ARCH_AARCH64, littleEndian: true},
	"riscv64": {auditArch: unix.AUDIT_ARCH_RISCV64, littleEndian: true},
}

func nativeArch() (archFacts, error) {
	a, ok := arches[runtime.GOARCH]
	if !ok {
		return archFacts{}, &field.Error{Field: "Seccomp", Problem: "no filter for architecture " + runtime.GOARCH + " (amd64, arm64 and riscv64 have one)", Fix: "use {Unconfined} only if you accept no confinement"}
	}
	return a, nil
}

// lateSyscalls are syscalls newer than some libseccomp builds know (Debian
// 12's 2.5.4 stops at futex_requeue, older builds earlier). Since Linux 5.1
// every architecture listed above shares these numbers, so they are used raw
// when libseccomp cannot resolve the name.
var lateSyscalls = map[string]int{
	"pidfd_send_signal":       424,
	"io_uring_setup":          425,
	"io_uring_enter":          426,
	"io_uring_register":       427,
	"open_tree":               428,
	"move_mount":              429,
	"fsopen":                  430,
	"fsconfig":                431,
	"fsmount":                 432,
	"fspick":                  433,
	"pidfd_open":              434,
	"clone3":                  435,
	"close_range":             436,
	"openat2":                 437,
	"pidfd_getfd":             438,
	"faccessat2":              439,
	"process_madvise":         440,
	"epoll_pwait2":            441,
	"mount_setattr":           442,
	"quotactl_fd":             443,
	"landlock_create_ruleset": 444,
	"landlock_add_rule":       445,
	"landlock_restrict_self":  446,
	"memfd_secret":            447,
	"process_mrelease":        448,
	"futex_waitv":             449,
	"set_mempolicy_home_node": 450,
	"cachestat":               451,
	"fchmodat2":               452,
	"map_shadow_stack":        453,
	"futex_wake":              454,
	"futex_wait":              455,
	"futex_requeue":           456,
	"statmount":               457,
	"listmount":               458,
	"lsm_get_self_attr":       459,
	"lsm_set_self_attr":       460,
	"lsm_list_modules":        461,
	"mseal":                   462,
	"setxattrat":              463,
	"getxattrat":              464,
	"listxattrat":             465,
	"removexattrat":           466,
	"open_tree_attr":          467,
	"file_getattr":            468,
	"file_setattr":            469,
}

// x32SyscallBit marks x32 syscalls on x86_64; libseccomp kills them with the
// bad-arch action when the filter only holds the native arch.
const x32SyscallBit = 0x40000000
