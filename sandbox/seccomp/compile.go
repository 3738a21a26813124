package seccomp

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Compile builds, in the supervisor, the BPF program for profile
// ("default" or a Docker/OCI JSON file). The result is the raw sock_filter
// array (8 bytes per instruction, native byte order), native arch only: a
// syscall of another arch or of x32 kills the process, with logDenials too
// (it is never a server's real need, and would bypass every argument check).
// families are the socket families the default profile allows (a JSON
// profile decides sockets itself); logDenials turns every refusal of the
// profile (errno, kill, trap, trace) into SCMP_ACT_LOG. ENOSYS answers
// (clone3, calls newer than the profile) stay: callers fall back from them.
// Every call compiles afresh; starts use Program, which does not.
func Compile(profile string, families Families, logDenials bool) ([]byte, error) {
	if err := families.check(); err != nil {
		return nil, err
	}
	arch, err := nativeArch()
	if err != nil {
		return nil, err
	}
	var b *builder
	pro := prologue{arch: arch, enosysAbove: -1, ioctlNr: -1, fcntlNr: -1}
	if profile == "default" {
		if b, err = newBuilder(actEPERM, logDenials); err != nil {
			return nil, err
		}
		defer b.release()
		if err := addDefaultProfile(b, families); err != nil {
			return nil, err
		}
		// libseccomp cannot refuse a value of ioctl's 32-bit cmd while allowing
		// all others, so the TIOCSTI/TIOCLINUX check is hand-written.
		ioctl, _, _ := b.resolve("ioctl")
		pro.ioctlNr = int(ioctl)
		fcntl, _, _ := b.resolve("fcntl")
		pro.fcntlNr = int(fcntl)
		pro.ioctlDeny = b.retDenied(unix.EPERM)
		pro.enosysAbove = b.maxKnown
	} else {
		dp, err := readDockerProfile(profile)
		if err != nil {
			return nil, err
		}
		if b, err = dp.build(logDenials); err != nil {
			return nil, err
		}
		defer b.release()
		if dp.defaultDenies {
			pro.enosysAbove = b.maxKnown
		}
	}
	prog, err := b.export()
	if err != nil {
		return nil, err
	}
	prog = append(pro.assemble(), prog...)
	if n := len(prog) / 8; n > unix.BPF_MAXINSNS {
		return nil, fmt.Errorf("seccomp profile %q compiles to %d BPF instructions, over the kernel's limit of %d; merge rules or drop argument conditions", profile, n, unix.BPF_MAXINSNS)
	}
	return prog, nil
}
