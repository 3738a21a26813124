//go:build linux

package main

import (
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// setIDSearchMax bounds the entries probeSetIDSharedMapping looks at.
const setIDSearchMax = 10000

// probeSetIDSharedMapping looks for set-user-ID or set-group-ID files it can
// open for writing in its --rw dir (and the one the test names) and writes
// through a MAP_SHARED mapping of each, which unlike write(2) does not clear
// the bits: on the host the file would then run the server's code as its
// owner. It writes back the byte it read, so the content stays the same.
func probeSetIDSharedMapping(a *Args, at *attempts) {
	var candidates []string
	if a.SetIDFile != "" {
		candidates = append(candidates, a.SetIDFile)
	}
	if a.ReadWriteDir != "" {
		n := 0
		filepath.WalkDir(a.ReadWriteDir, func(p string, d fs.DirEntry, err error) error {
			if n++; err != nil || n > setIDSearchMax {
				return filepath.SkipDir
			}
			if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() && fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid) != 0 && p != a.SetIDFile {
				candidates = append(candidates, p)
			}
			return nil
		})
	}
	if len(candidates) == 0 {
		at.note("no set-ID file in the grants")
		return
	}
	for _, p := range candidates {
		rewriteShared(at, p)
	}
}

func rewriteShared(at *attempts, p string) {
	fd, err := unix.Open(p, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		at.note("open %s for writing: %s", p, errText(err))
		return
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Size == 0 {
		at.note("%s: empty or unstatable (%v): nothing to map", p, err)
		return
	}
	m, err := unix.Mmap(fd, 0, 1, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		at.note("mmap %s shared and writable: %s", p, errText(err))
		return
	}
	b := m[0]
	m[0] = b // dirties the page with the byte it held
	err = unix.Msync(m, unix.MS_SYNC)
	unix.Munmap(m)
	if err != nil {
		at.note("msync %s: %s", p, errText(err))
		return
	}
	if err := unix.Fstat(fd, &st); err != nil {
		at.note("%s: %s after the write: unverifiable", p, errText(err))
		return
	}
	if st.Mode&(unix.S_ISUID|unix.S_ISGID) != 0 {
		at.got("wrote %s through a shared mapping; it is still mode %o", p, st.Mode&0o7777)
	} else {
		at.note("wrote %s through a shared mapping; the kernel cleared its set-ID bits", p)
	}
}

// heldLocks keeps the locks probeLocksOnGrants took for as long as the
// server runs: the test checks that they end with it.
var heldLocks []*os.File

// probeLocksOnGrants locks the --ro grant's file. flock and fcntl read locks
// need only a readable descriptor, so a server can hold them on any file it
// can read (a documented limit: they last as long as the server). A write
// lock would need the file open for writing, which a read-only grant never
// allows; taking one is the escape.
func probeLocksOnGrants(a *Args, at *attempts) {
	if a.ReadOnlyDir == "" {
		at.note("no --ro dir given: nothing tried")
		return
	}
	p := filepath.Join(a.ReadOnlyDir, "granted-ro.txt")
	f, err := os.Open(p)
	if err != nil {
		at.note("open %s: %s", p, errText(err))
		return
	}
	heldLocks = append(heldLocks, f)
	fd := int(f.Fd())
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err == nil {
		at.note("flock LOCK_EX held on %s (a documented limit: until the server ends)", p)
	} else {
		at.note("flock LOCK_EX on %s: %s", p, errText(err))
	}
	rd := unix.Flock_t{Type: unix.F_RDLCK, Whence: 0}
	if err := unix.FcntlFlock(uintptr(fd), unix.F_SETLK, &rd); err == nil {
		at.note("fcntl F_RDLCK held on %s (a documented limit: until the server ends)", p)
	} else {
		at.note("fcntl F_RDLCK on %s: %s", p, errText(err))
	}
	wr := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0}
	at.try("fcntl F_WRLCK on "+p, unix.FcntlFlock(uintptr(fd), unix.F_SETLK, &wr))
	wf, err := os.OpenFile(p, os.O_RDWR, 0)
	if err == nil {
		wf.Close()
		at.got("opened %s for writing, as a write lock needs", p)
	} else {
		at.note("open %s for writing: %s", p, errText(err))
	}
}
