package initstage

/*
#cgo CFLAGS: -Wall -Wextra -Werror
#define INIT_STAGE_GO
#include "init.h"
*/
import "C"

import (
	"time"
	"unsafe"
)

// Names and places of init.h, which the C side uses as they are.
const (
	Arg0     = C.INIT_ARG0        // argv[0] of the exec'd init stage
	Home     = C.SANDBOX_HOME     // the server's empty tmpfs HOME
	Hostname = C.SANDBOX_HOSTNAME // the sandbox's hostname
	// CgroupMount is where cgroup filesystems are mounted, on the host and
	// inside (sandbox/cgroups' Mount): the constructor needs it before Go.
	CgroupMount = C.CGROUP_MOUNT

	// AdoptTimeout bounds how long a pre-forked init stage and its adopter
	// wait for each other.
	AdoptTimeout = C.ADOPT_TIMEOUT_SEC * time.Second
)

// initCaps are init.h's INIT_CAPS as a list, for SysProcAttr.AmbientCaps.
func initCaps() []uintptr {
	var caps []uintptr
	for c := range uintptr(64) {
		if uint64(C.INIT_CAPS)&(1<<c) != 0 {
			caps = append(caps, c)
		}
	}
	return caps
}

// cWithin is path.c's path_within, the init stage's copy of
// pathrule.Within for the clean absolute paths it is given (C runs before
// any Go does); shared_test.go holds the two to the same answers.
func cWithin(path, dir string) bool {
	return bool(C.path_within(cBytes(path), C.size_t(len(path)), cBytes(dir), C.size_t(len(dir))))
}

// cBytes passes a string's bytes to C without a copy; C reads only the
// given length and keeps no pointer.
func cBytes(s string) *C.char { return (*C.char)(unsafe.Pointer(unsafe.StringData(s))) }
