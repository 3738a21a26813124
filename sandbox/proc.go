package sandbox

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Inside the fresh /proc, kernel interfaces a server has no business with
// are covered (the list Docker and runc mask) and the writable knobs are
// made read-only.
var (
	procMaskedFiles = []string{"kcore", "keys", "timer_list", "timer_stats", "sched_debug", "sysrq-trigger",
		"latency_stats", "kallsyms", "kpagecount", "kpageflags", "kpagecgroup"}
	procMaskedDirs = []string{"acpi", "asound", "scsi", "driver"}
	procReadOnly   = []string{"sys", "bus", "fs", "irq"}
)

// populateProc mounts a /proc that shows only the sandbox's pid namespace.
func populateProc() error {
	proc := stagingDir + "/proc"
	if err := os.Mkdir(proc, 0o555); err != nil {
		return err
	}
	if err := unix.Mount("proc", proc, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		if errors.Is(err, unix.EPERM) {
			return fmt.Errorf("mounting proc: %v: the host's /proc is partly covered (as in many containers), so the kernel refuses a fresh one in a user namespace; run mcpsandbox as root or on the host", err)
		}
		return fmt.Errorf("mounting proc: %v", err)
	}
	null := stagingDir + "/dev/null"
	for _, name := range procMaskedFiles {
		if err := bindOver(null, proc+"/"+name, attrProc); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("masking /proc/%s: %v", name, err)
		}
	}
	for _, name := range procMaskedDirs {
		p := proc + "/" + name
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err := unix.Mount("tmpfs", p, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,nr_inodes=1,mode=0555"); err != nil {
			return fmt.Errorf("masking /proc/%s: %v", name, err)
		}
	}
	for _, name := range procReadOnly {
		p := proc + "/" + name
		if err := bindOver(p, p, attrProc); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("making /proc/%s read-only: %v", name, err)
		}
	}
	return nil
}
