//go:build linux

package main

import (
	"bytes"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// startFDs is taken during package initialisation, before the server opens
// anything: every descriptor above 2 here was inherited.
var startFDs = inheritedFDs()

type inheritedFD struct {
	fd     int
	target string
}

func inheritedFDs() []inheritedFD {
	var out []inheritedFD
	for fd := 3; fd < 4096; fd++ {
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		// An inherited descriptor cannot carry close-on-exec (the exec
		// would have closed it): those were opened by this process's own
		// runtime, e.g. Go's cgroup cpu.max reader.
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			continue
		}
		target, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
		if err != nil {
			target = errText(err)
		}
		out = append(out, inheritedFD{fd, target})
	}
	return out
}

func probeLeakedFDs(a *Args, at *attempts) {
	for _, f := range startFDs {
		at.got("fd %d was open at start: %s", f.fd, f.target)
	}
	if len(startFDs) == 0 {
		at.note("only fds 0-2 were open at start")
	}
}

func probeEnvSecrets(a *Args, at *attempts) {
	if a.EnvCanary == "" {
		at.got("no canary variable given: nothing tried")
		return
	}
	var names []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		names = append(names, name)
		if name == a.EnvCanary {
			at.got("%s is in the environment", name)
		}
	}
	at.note("environment: %s", strings.Join(names, " "))
	for _, p := range []string{"/proc/self/environ", "/proc/1/environ"} {
		b, err := os.ReadFile(p)
		if err != nil {
			at.note("read %s: %s", p, errText(err))
			continue
		}
		if bytes.Contains(b, []byte(a.EnvCanary+"=")) {
			at.got("%s holds %s", p, a.EnvCanary)
		}
	}
}
