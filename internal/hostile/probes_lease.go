//go:build linux

package main

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// probeLeaseGrantFile takes a lease on the --ro grant's file. A lease needs
// only ownership, which an idmapped grant (or the caller's own uid) gives
// the server, and then every host open of the file for writing (for a
// write lease: any open) waits up to lease-break-time. Each lease taken is
// given up at once.
func probeLeaseGrantFile(a *Args, at *attempts) {
	if a.ReadOnlyDir == "" {
		at.note("no --ro dir given: nothing tried")
		return
	}
	p := filepath.Join(a.ReadOnlyDir, "granted-ro.txt")
	for _, l := range []struct {
		what string
		typ  int
	}{{"F_SETLEASE F_RDLCK", unix.F_RDLCK}, {"F_SETLEASE F_WRLCK", unix.F_WRLCK}} {
		f, err := os.Open(p)
		if err != nil {
			at.note("open %s: %s", p, errText(err))
			return
		}
		_, err = unix.FcntlInt(f.Fd(), unix.F_SETLEASE, l.typ)
		if err == nil {
			unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_UNLCK)
		}
		f.Close()
		at.denied(l.what+" on "+p, err)
	}
}
