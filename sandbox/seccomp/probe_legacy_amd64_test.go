package seccomp

import "golang.org/x/sys/unix"

// legacyModeSyscalls are the mode-taking calls that only older
// architectures have (arm64 and riscv64 have only the *at forms).
var legacyModeSyscalls = map[string]uintptr{
	"open": unix.SYS_OPEN, "creat": unix.SYS_CREAT, "chmod": unix.SYS_CHMOD, "mknod": unix.SYS_MKNOD,
}
