package sandbox

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// dropPrivileges switches to the sandbox user and empties every capability
// set. The bounding set goes first, while CAP_SETPCAP is still held.
func dropPrivileges(cfg *initConfig) error {
	for c := 0; c < 64; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if err == unix.EINVAL {
			break // past the kernel's last capability
		}
		if err != nil {
			return fmt.Errorf("dropping capability %d from the bounding set: %v", c, err)
		}
	}
	if !cfg.UserNS {
		// In a user namespace the uid is already the caller's, and the
		// kernel forbids setgroups there.
		if err := syscall.Setgroups(nil); err != nil {
			return fmt.Errorf("setgroups: %v", err)
		}
		if err := syscall.Setresgid(int(cfg.GID), int(cfg.GID), int(cfg.GID)); err != nil {
			return fmt.Errorf("setresgid %d: %v", cfg.GID, err)
		}
		if err := syscall.Setresuid(int(cfg.UID), int(cfg.UID), int(cfg.UID)); err != nil {
			return fmt.Errorf("setresuid %d: %v", cfg.UID, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clearing ambient capabilities: %v", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return fmt.Errorf("clearing capabilities: %v", err)
	}
	if syscall.Getuid() == 0 || syscall.Geteuid() == 0 {
		return fmt.Errorf("still uid 0 after the credential change: refusing to run the server as root")
	}
	return nil
}
