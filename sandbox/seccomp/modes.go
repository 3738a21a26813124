package seccomp

import "golang.org/x/sys/unix"

// A server must not leave set-user-ID or set-group-ID files behind. Inside
// the sandbox the bits do nothing (nosuid mounts, no_new_privs), but on the
// host a file planted in a --rw grant keeps them: in alice's idmapped grant
// `chmod 4755` leaves a setuid-alice program, and every local user who can
// reach the directory becomes alice by running it (under a user namespace
// the same holds for the caller's uid). So each call that creates a file
// with a mode, or sets one, is allowed only when the mode holds neither bit.
//
// mkdir and mkdirat stay allowed: the kernel drops S_ISUID and S_ISGID from
// mkdir's mode (a directory gets S_ISGID only from a setgid parent), and a
// setgid directory grants nothing: it cannot be run, its files only take
// its group. openat2 passes its mode in a struct the filter cannot read; it
// answers ENOSYS, as on kernels before 5.6, and callers fall back to openat
// (glibc, Go, Node and Python never use it for open).

const (
	modeSetID = unix.S_ISUID | unix.S_ISGID
	// openUsesMode are the open flags under which the kernel reads the mode
	// (O_CREAT, or __O_TMPFILE: O_TMPFILE without its O_DIRECTORY part).
	openUsesMode = unix.O_CREAT | unix.O_TMPFILE&^unix.O_DIRECTORY
)

// modeRule is where a call's mode argument is; flagsArg >= 0 names the
// open flags that decide whether the mode is used at all.
type modeRule struct {
	name     string
	modeArg  uint
	flagsArg int
}

var modeRules = []modeRule{
	{"openat", 3, 2}, // first: the hot one
	{"open", 2, 1},
	{"creat", 1, -1},
	{"chmod", 1, -1},
	{"fchmod", 1, -1},
	{"fchmodat", 2, -1},
	{"fchmodat2", 2, -1},
	{"mknod", 1, -1},
	{"mknodat", 2, -1},
}

// openatPriority keeps openat among the hot calls when the filter is in
// libseccomp's priority order rather than a tree.
const openatPriority = 255 - 34

// addModeRules allows each call of modeRules as OR'ed conditional
// rules (libseccomp drops conditions on a call that is also allowed
// unconditionally): the mode is unused, or it holds no set-ID bit. The mode
// is a umode_t and the flags an int; masking reads only the bits that
// matter, so garbage in the rest of the register changes nothing.
func addModeRules(b *builder) error {
	for _, r := range modeRules {
		if r.flagsArg >= 0 {
			if err := b.allowIf(r.name, argMaskedEq(uint(r.flagsArg), openUsesMode, 0)); err != nil {
				return err
			}
		}
		if err := b.allowIf(r.name, argMaskedEq(r.modeArg, modeSetID, 0)); err != nil {
			return err
		}
	}
	if err := b.prioritize("openat", openatPriority); err != nil {
		return err
	}
	return b.answerENOSYS("openat2")
}
