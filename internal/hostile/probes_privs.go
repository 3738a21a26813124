//go:build linux

package main

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// procStatus returns the fields of /proc/self/status.
func procStatus() (map[string]string, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok {
			m[k] = strings.TrimSpace(v)
		}
	}
	return m, sc.Err()
}

// statusField fails the class when the field cannot be read.
func statusField(at *attempts, key string) (string, bool) {
	st, err := procStatus()
	if err != nil {
		at.got("cannot read /proc/self/status (%v): unverifiable", err)
		return "", false
	}
	v, ok := st[key]
	if !ok {
		at.got("/proc/self/status has no %s: unverifiable", key)
	}
	return v, ok
}

func probeUIDRoot(a *Args, at *attempts) {
	r, e, s := unix.Getresuid()
	if r == 0 || e == 0 || s == 0 {
		at.got("running as uid %d/%d/%d (real/effective/saved)", r, e, s)
	} else {
		at.note("uid %d/%d/%d", r, e, s)
	}
	r, e, s = unix.Getresgid()
	if r == 0 || e == 0 || s == 0 {
		at.got("running as gid %d/%d/%d", r, e, s)
	} else {
		at.note("gid %d/%d/%d", r, e, s)
	}
	groups, _ := unix.Getgroups()
	for _, g := range groups {
		if g == 0 {
			at.got("member of group 0")
		}
	}
	if m, err := os.ReadFile("/proc/self/uid_map"); err == nil {
		at.note("uid_map: %s", strings.Join(strings.Fields(string(m)), " "))
	}
}

func probeSetuidRoot(a *Args, at *attempts) {
	onLockedThread(func() {
		// Raw syscalls on a throwaway thread: a success changes only it.
		_, _, e1 := unix.RawSyscall(unix.SYS_SETRESUID, 0, 0, 0)
		at.try("setresuid(0, 0, 0)", errnoErr(e1))
		_, _, e2 := unix.RawSyscall(unix.SYS_SETRESGID, 0, 0, 0)
		at.try("setresgid(0, 0, 0)", errnoErr(e2))
		zero := uint32(0)
		_, _, e3 := unix.RawSyscall(unix.SYS_SETGROUPS, 1, uintptrOf(&zero), 0)
		at.try("setgroups([0])", errnoErr(e3))
	})
}

func probeCapabilities(a *Args, at *attempts) {
	st, err := procStatus()
	if err != nil {
		at.got("cannot read /proc/self/status (%v): unverifiable", err)
		return
	}
	for _, k := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
		v, ok := st[k]
		switch {
		case !ok:
			at.got("%s missing from /proc/self/status", k)
		case strings.Trim(v, "0") != "":
			at.got("%s = %s", k, v)
		default:
			at.note("%s = %s", k, v)
		}
	}
}

func probeNoNewPrivs(a *Args, at *attempts) {
	if v, ok := statusField(at, "NoNewPrivs"); ok {
		if v != "1" {
			at.got("NoNewPrivs is %s", v)
		} else {
			at.note("NoNewPrivs 1")
		}
	}
}

func probeSeccompActive(a *Args, at *attempts) {
	if v, ok := statusField(at, "Seccomp"); ok {
		if v != "2" {
			at.got("Seccomp mode is %s, want 2 (filter)", v)
		} else {
			at.note("Seccomp 2 (filter)")
		}
	}
	if v, ok := statusField(at, "Seccomp_filters"); ok {
		at.note("Seccomp_filters %s", v)
	}
}

// probeSetuidBinaries lists set-user/group-ID files reachable from inside.
// They cannot gain privileges when no_new_privs is set and their mount is
// nosuid; both must hold.
func probeSetuidBinaries(a *Args, at *attempts) {
	mounts, err := readMountinfo()
	if err != nil {
		at.got("cannot read mountinfo (%v): unverifiable", err)
		return
	}
	nnp, _ := statusField(at, "NoNewPrivs")
	var found []string
	filepath.WalkDir("/", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (p == "/proc" || p == "/sys" || p == "/dev") {
			return fs.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil || fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid) == 0 {
			return nil
		}
		found = append(found, p)
		m := mounts.containing(p)
		if m == nil || !m.nosuid() {
			at.got("%s (%s) is on a mount without nosuid", p, fi.Mode())
		}
		return nil
	})
	if len(found) > 0 && nnp != "1" {
		at.got("setuid files reachable and no_new_privs is not set: %s", strings.Join(found, " "))
	}
	at.note("%d setuid/setgid files reachable", len(found))
}

// probeOpenByHandleAt is the "shocker" escape: with CAP_DAC_READ_SEARCH a
// file handle opens any inode of the mount, bypassing the new root.
func probeOpenByHandleAt(a *Args, at *attempts) {
	exe, _ := os.Executable()
	for _, p := range []string{exe, "/usr/bin/env", "/etc/passwd", "/"} {
		h, _, err := unix.NameToHandleAt(unix.AT_FDCWD, p, 0)
		if err != nil {
			at.note("name_to_handle_at(%s): %s", p, errText(err))
			continue
		}
		mountFD, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			at.note("open %s: %s", p, errText(err))
			continue
		}
		fd, err := unix.OpenByHandleAt(mountFD, h, unix.O_RDONLY|unix.O_CLOEXEC)
		unix.Close(mountFD)
		if err == nil {
			unix.Close(fd)
		}
		at.denied("open_by_handle_at("+p+")", err)
		return
	}
	at.note("no reachable filesystem hands out file handles")
}
