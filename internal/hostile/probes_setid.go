//go:build linux

package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// setIDPlantDir is where probeSetuidPlanting works, inside the --rw dir; the
// test looks for set-ID files under the --rw dir on the host.
const setIDPlantDir = "setid-planting"

const sysFchmodat2 = 452 // Linux 6.6; not in every x/sys

// probeSetuidPlanting tries to leave a set-user-ID or set-group-ID file in
// the --rw dir. Inside, nosuid and no_new_privs make the bits useless, but
// on the host the file keeps them: in an idmapped grant it would run as the
// grant's owner for any local user who can reach it. Every file is empty,
// so even a set-ID one runs nothing; they stay for the test to check.
func probeSetuidPlanting(a *Args, at *attempts) {
	if a.ReadWriteDir == "" {
		at.got("no --rw dir given: nothing tried")
		return
	}
	dir := filepath.Join(a.ReadWriteDir, setIDPlantDir)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		at.got("mkdir %s: %s: nothing tried", dir, errText(err))
		return
	}
	for _, try := range setIDTries() {
		p := filepath.Join(dir, try.name)
		os.Remove(p)
		if err := try.run(p); err != nil {
			at.note("%s: %s", try.what, errText(err))
		} else {
			at.note("%s: call succeeded", try.what)
		}
	}
	// What decides is the mode the files ended up with.
	ents, err := os.ReadDir(dir)
	if err != nil {
		at.got("list %s: %s: unverifiable", dir, errText(err))
		return
	}
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			continue
		}
		if fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid) != 0 {
			at.got("%s is %s on the grant", e.Name(), fi.Mode())
		}
	}
	at.note("%d files left in %s, none set-ID unless said", len(ents), dir)
}

type setIDTry struct {
	name, what string
	run        func(path string) error
}

// createEmpty makes an empty 0755 file to change the mode of.
func createEmpty(path string) (int, error) {
	return unix.Open(path, unix.O_RDONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o755)
}

// onNewFile creates path and then calls change on it.
func onNewFile(change func(path string, fd int) error) func(string) error {
	return func(path string) error {
		fd, err := createEmpty(path)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return change(path, fd)
	}
}

func setIDTries() []setIDTry {
	tries := []setIDTry{
		{"chmod-4755", "chmod 4755", onNewFile(func(p string, _ int) error { return unix.Chmod(p, 0o4755) })},
		{"chmod-2755", "chmod 2755", onNewFile(func(p string, _ int) error { return unix.Chmod(p, 0o2755) })},
		{"fchmod-4755", "fchmod 4755", onNewFile(func(_ string, fd int) error { return unix.Fchmod(fd, 0o4755) })},
		{"fchmodat-6755", "fchmodat 6755", onNewFile(func(p string, _ int) error {
			return unix.Fchmodat(unix.AT_FDCWD, p, 0o6755, 0)
		})},
		{"fchmodat2-4755", "fchmodat2 4755", onNewFile(func(p string, _ int) error {
			return rawPath(sysFchmodat2, unix.AT_FDCWD, p, 0o4755, 0)
		})},
		{"open-creat-4755", "openat(O_CREAT, 04755)", func(p string) error {
			fd, err := unix.Open(p, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o4755)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}},
		{"open-tmpfile-2755", "openat(O_TMPFILE, 02755) linked in", linkTmpfile},
		{"mknod-4755", "mknodat(S_IFREG|04755)", func(p string) error {
			return unix.Mknodat(unix.AT_FDCWD, p, unix.S_IFREG|0o4755, 0)
		}},
	}
	for name, nr := range legacyModeCalls {
		switch name {
		case "chmod":
			tries = append(tries, setIDTry{"legacy-chmod-4755", "chmod(2) 4755", onNewFile(func(p string, _ int) error {
				return rawPath(nr, p, 0o4755)
			})})
		case "creat":
			tries = append(tries, setIDTry{"legacy-creat-4755", "creat(2) 04755", func(p string) error {
				return rawPathFd(nr, p, 0o4755)
			}})
		case "open":
			tries = append(tries, setIDTry{"legacy-open-4755", "open(2) O_CREAT 04755", func(p string) error {
				return rawPathFd(nr, p, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o4755)
			}})
		case "mknod":
			tries = append(tries, setIDTry{"legacy-mknod-4755", "mknod(2) S_IFREG|04755", func(p string) error {
				return rawPath(nr, p, unix.S_IFREG|0o4755, 0)
			}})
		}
	}
	return tries
}

// linkTmpfile creates an unnamed file with mode 02755 and gives it the name
// path through /proc/self/fd (no capability needed).
func linkTmpfile(path string) error {
	fd, err := unix.Open(filepath.Dir(path), unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o2755)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
}

// rawPath makes syscall nr with args: ints as they are, strings as C
// strings (the legacy calls and fchmodat2 have no wrapper everywhere).
func rawPath(nr uintptr, args ...any) error {
	_, err := rawPathCall(nr, args...)
	return err
}

// rawPathFd is rawPath for calls that return a descriptor, which it closes.
func rawPathFd(nr uintptr, args ...any) error {
	fd, err := rawPathCall(nr, args...)
	if err == nil {
		unix.Close(int(fd))
	}
	return err
}

func rawPathCall(nr uintptr, args ...any) (uintptr, error) {
	var a [6]uintptr
	var keep []*byte
	for i, v := range args {
		switch v := v.(type) {
		case string:
			b, err := unix.BytePtrFromString(v)
			if err != nil {
				return 0, err
			}
			keep = append(keep, b)
			a[i] = uintptr(unsafe.Pointer(b))
		case int:
			a[i] = uintptr(v)
		}
	}
	r, _, e := unix.Syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
	runtime.KeepAlive(keep)
	return r, errnoErr(e)
}
