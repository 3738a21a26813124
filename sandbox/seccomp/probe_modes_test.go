package seccomp

// Probes for the set-ID mode rules (modes.go): every call that
// creates a file with a mode or sets one, with S_ISUID, with S_ISGID and
// without either. They work in probeDir, a private directory of the test.

import (
	"fmt"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	probeDirEnv    = "MCPSANDBOX_SECCOMP_PROBE_DIR" // scratch directory for file probes
	createExcl     = unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL | unix.O_CLOEXEC
	probeModePlain = 0o755
)

var probeDir string // set by seccompProbeMain from probeDirEnv

// probeFile is a fresh path in probeDir, one per probe.
func probeFile(probe string) string { return filepath.Join(probeDir, probe) }

// probeExisting creates probeFile(probe) with mode 0600 and returns it.
func probeExisting(probe string) (string, error) {
	p := probeFile(probe)
	fd, err := unix.Open(p, createExcl, 0o600)
	if err != nil {
		return "", fmt.Errorf("creating %s: %v", p, err) // not an errno: not the filter's doing
	}
	unix.Close(fd)
	return p, nil
}

// modeCall makes one call with mode on a path of its own named after probe.
type modeCall func(probe string, mode uintptr) error

// onExisting runs call on a file the probe created first.
func onExisting(call func(path, mode uintptr) error) modeCall {
	return func(probe string, mode uintptr) error {
		p, err := probeExisting(probe)
		if err != nil {
			return err
		}
		return call(cstr(p), mode)
	}
}

// modeCalls are the calls the rules cover, by the name the probes carry.
func modeCalls() map[string]modeCall {
	calls := map[string]modeCall{
		"openat": func(probe string, mode uintptr) error {
			return sysFd(unix.SYS_OPENAT, atFdcwd, cstr(probeFile(probe)), createExcl, mode)
		},
		"openat_tmpfile": func(probe string, mode uintptr) error {
			return sysFd(unix.SYS_OPENAT, atFdcwd, cstr(probeDir), unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, mode)
		},
		"fchmod": func(probe string, mode uintptr) error {
			p, err := probeExisting(probe)
			if err != nil {
				return err
			}
			fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				return fmt.Errorf("open %s: %v", p, err)
			}
			defer unix.Close(fd)
			return sys(unix.SYS_FCHMOD, uintptr(fd), mode)
		},
		"fchmodat":  onExisting(func(p, mode uintptr) error { return sys(unix.SYS_FCHMODAT, atFdcwd, p, mode) }),
		"fchmodat2": onExisting(func(p, mode uintptr) error { return sys(452, atFdcwd, p, mode, 0) }),
		"mknodat": func(probe string, mode uintptr) error {
			return sys(unix.SYS_MKNODAT, atFdcwd, cstr(probeFile(probe)), unix.S_IFREG|mode, 0)
		},
	}
	for name, nr := range legacyModeSyscalls {
		switch name {
		case "open":
			calls[name] = func(probe string, mode uintptr) error {
				return sysFd(nr, cstr(probeFile(probe)), createExcl, mode)
			}
		case "creat":
			calls[name] = func(probe string, mode uintptr) error { return sysFd(nr, cstr(probeFile(probe)), mode) }
		case "chmod":
			calls[name] = onExisting(func(p, mode uintptr) error { return sys(nr, p, mode) })
		case "mknod":
			calls[name] = func(probe string, mode uintptr) error {
				return sys(nr, cstr(probeFile(probe)), unix.S_IFREG|mode, 0)
			}
		}
	}
	return calls
}

// seccompModeProbes and seccompModeWant: each call with S_ISUID and with
// S_ISGID is refused; with a plain mode, or garbage above the 16 bits of
// umode_t, it is allowed. Opening without O_CREAT ignores the mode, so a
// set-ID mode there is allowed too.
var seccompModeProbes, seccompModeWant = modeProbes()

func modeProbes() (map[string]func() error, map[string]string) {
	probes, want := map[string]func() error{}, map[string]string{}
	add := func(name, result string, f func() error) {
		probes[name], want[name] = f, result
	}
	for call, f := range modeCalls() {
		for suffix, c := range map[string]struct {
			mode   uintptr
			result string
		}{
			"setuid":   {unix.S_ISUID | probeModePlain, "EPERM"},
			"setgid":   {unix.S_ISGID | probeModePlain, "EPERM"},
			"plain":    {probeModePlain, "ok"},
			"highbits": {highBits | probeModePlain, "ok"},
		} {
			name := "mode_" + call + "_" + suffix
			add(name, c.result, func() error { return f(name, c.mode) })
		}
	}
	// The mode only counts when the call creates.
	add("mode_openat_nocreat_setid", "ok", func() error {
		p, err := probeExisting("mode_openat_nocreat_setid")
		if err != nil {
			return err
		}
		return sysFd(unix.SYS_OPENAT, atFdcwd, cstr(p), unix.O_RDONLY|unix.O_CLOEXEC, unix.S_ISUID|unix.S_ISGID|probeModePlain)
	})
	add("mode_openat_flags_highbits_setid", "ok", func() error { // the kernel reads flags as an int
		p, err := probeExisting("mode_openat_flags_highbits_setid")
		if err != nil {
			return err
		}
		return sysFd(unix.SYS_OPENAT, atFdcwd, cstr(p), highBits|unix.O_RDONLY, unix.S_ISUID|probeModePlain)
	})
	add("mode_openat_creat_flags_highbits_setid", "EPERM", func() error {
		return sysFd(unix.SYS_OPENAT, atFdcwd, cstr(probeFile("mode_openat_creat_flags_highbits_setid")), highBits|createExcl, unix.S_ISUID|probeModePlain)
	})
	if nr, ok := legacyModeSyscalls["open"]; ok {
		add("mode_open_nocreat_setid", "ok", func() error {
			p, err := probeExisting("mode_open_nocreat_setid")
			if err != nil {
				return err
			}
			return sysFd(nr, cstr(p), unix.O_RDONLY|unix.O_CLOEXEC, unix.S_ISUID|unix.S_ISGID|probeModePlain)
		})
	}
	// mkdir keeps S_ISGID allowed (the kernel drops the set-ID bits of
	// mkdir's mode anyway); openat2 looks unimplemented.
	add("mode_mkdirat_setgid", "ok", func() error {
		return sys(unix.SYS_MKDIRAT, atFdcwd, cstr(probeFile("mode_mkdirat_setgid")), unix.S_ISGID|probeModePlain)
	})
	add("mode_openat2", "ENOSYS", func() error {
		how := unix.OpenHow{Flags: createExcl, Mode: probeModePlain}
		return sysFd(unix.SYS_OPENAT2, atFdcwd, cstr(probeFile("mode_openat2")), uintptr(unsafe.Pointer(&how)), unix.SizeofOpenHow)
	})
	return probes, want
}
