//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Host-wide /proc files no namespace scopes: the kernel's arguments, the
// interrupt, softirq and disk counters (timing side channels), pressure
// stalls, the load and the boot id. Each probe shows the start of what it
// read, so the test can hold it against the host's own file.

// readShown reads path and returns its content; ok is false when it cannot
// be read (noted).
func readShown(at *attempts, path string) (string, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		at.note("read %s: %s", path, errText(err))
		return "", false
	}
	return string(data), true
}

func sample(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	if len(first) > 120 {
		first = first[:120]
	}
	return fmt.Sprintf("%d bytes, first line %q", len(s), first)
}

// counters: an informative file is not empty.
func probeCounters(path string) func(a *Args, at *attempts) {
	return func(a *Args, at *attempts) {
		s, ok := readShown(at, path)
		switch {
		case !ok:
		case strings.TrimSpace(s) == "":
			at.note("%s: empty", path)
		default:
			at.got("%s is the host's: %s", path, sample(s))
		}
	}
}

func probeProcCmdline(a *Args, at *attempts) { probeCounters("/proc/cmdline")(a, at) }

func probeProcInterrupts(a *Args, at *attempts) { probeCounters("/proc/interrupts")(a, at) }

func probeProcSoftirqs(a *Args, at *attempts) { probeCounters("/proc/softirqs")(a, at) }

func probeProcDiskstats(a *Args, at *attempts) { probeCounters("/proc/diskstats")(a, at) }

func probeProcPressure(a *Args, at *attempts) {
	for _, r := range []string{"cpu", "io", "memory", "irq"} {
		probeCounters("/proc/pressure/"+r)(a, at)
	}
}

// probeProcLoadavg: the fourth field counts the machine's threads, never
// zero on a host.
func probeProcLoadavg(a *Args, at *attempts) {
	s, ok := readShown(at, "/proc/loadavg")
	if !ok {
		return
	}
	f := strings.Fields(s)
	if len(f) >= 4 && strings.HasSuffix(f[3], "/0") {
		at.note("/proc/loadavg counts no threads: %s", sample(s))
		return
	}
	at.got("/proc/loadavg is the host's: %s", sample(s))
}

func probeProcBootID(a *Args, at *attempts) {
	s, ok := readShown(at, "/proc/sys/kernel/random/boot_id")
	switch {
	case !ok:
	case a.HostBootID == "":
		at.got("no host boot id given: nothing compared")
	case strings.TrimSpace(s) == a.HostBootID:
		at.got("the boot id is the host's: %s", sample(s))
	default:
		at.note("a boot id of its own: %s", sample(s))
	}
}

// probeGrantSockets connects to the unix sockets host programs listen on in
// the grants, by name and through a hard link made in the --rw grant.
func probeGrantSockets(a *Args, at *attempts) {
	if len(a.GrantSockets) == 0 {
		at.got("no socket in a grant given: nothing tried")
		return
	}
	for i, s := range a.GrantSockets {
		tryDial(at, "unix", s)
		if a.ReadWriteDir == "" {
			continue
		}
		link := filepath.Join(a.ReadWriteDir, fmt.Sprintf("grant-socket-link-%d", i))
		if err := unix.Link(s, link); err != nil {
			at.note("link %s: %s", s, errText(err))
			continue
		}
		tryDial(at, "unix", link)
		os.Remove(link)
	}
}
