//go:build linux

package main

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// probeClockSet sets the clock to the time just read: a success moves it by
// microseconds at most.
func probeClockSet(a *Args, at *attempts) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_REALTIME, &ts); err == nil {
		at.denied("clock_settime(CLOCK_REALTIME, now)", unix.ClockSettime(unix.CLOCK_REALTIME, &ts))
	}
	var tv unix.Timeval
	if err := unix.Gettimeofday(&tv); err == nil {
		at.denied("settimeofday(now)", unix.Settimeofday(&tv))
	}
	// A zero-mode adjtimex only reads; ADJ_TICK with the current tick
	// changes nothing but needs CAP_SYS_TIME.
	var tx unix.Timex
	if _, err := unix.Adjtimex(&tx); err != nil {
		at.note("adjtimex(read): %s", errText(err))
	} else {
		tx.Modes = unix.ADJ_TICK
		_, err := unix.Adjtimex(&tx)
		at.denied("adjtimex(ADJ_TICK, current tick)", err)
	}
}

// probeHostnameSet sets the host and domain names to their current values.
func probeHostnameSet(a *Args, at *attempts) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		at.got("uname: %v: unverifiable", err)
		return
	}
	at.denied("sethostname(current)", unix.Sethostname(cString(u.Nodename[:])))
	at.denied("setdomainname(current)", unix.Setdomainname(cString(u.Domainname[:])))
	at.note("hostname %q", cString(u.Nodename[:]))
}

func cString(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}

// probeRlimitRaise raises hard limits on a throwaway thread's process: the
// limits are per process, so only values one step above the current hard
// limit are tried, and RLIMIT_CORE must be 0 (no core dumps of secrets).
func probeRlimitRaise(a *Args, at *attempts) {
	for _, r := range []struct {
		name string
		res  int
	}{{"RLIMIT_NOFILE", unix.RLIMIT_NOFILE}, {"RLIMIT_CORE", unix.RLIMIT_CORE}, {"RLIMIT_NPROC", unix.RLIMIT_NPROC}} {
		var cur unix.Rlimit
		if err := unix.Getrlimit(r.res, &cur); err != nil {
			at.note("getrlimit(%s): %s", r.name, errText(err))
			continue
		}
		at.note("%s %d/%d", r.name, cur.Cur, cur.Max)
		if r.res == unix.RLIMIT_CORE && cur.Max != 0 {
			at.got("RLIMIT_CORE hard limit is %d, want 0", cur.Max)
		}
		if cur.Max == unix.RLIM_INFINITY {
			continue
		}
		raised := unix.Rlimit{Cur: cur.Cur, Max: cur.Max + 1}
		err := unix.Prlimit(0, r.res, &raised, nil)
		if err == nil {
			unix.Prlimit(0, r.res, &cur, nil)
		}
		at.denied(fmt.Sprintf("raise %s hard limit to %d", r.name, raised.Max), err)
	}
}
