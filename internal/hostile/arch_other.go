//go:build linux && !amd64

package main

import "fmt"

// legacyModeCalls: none; this architecture has only the *at forms.
var legacyModeCalls = map[string]uintptr{}

func runArchChild(mode string) int {
	fmt.Println("-38") // ENOSYS: no foreign ABI on this architecture
	return 0
}

func probeSeccompArchBypass(a *Args, at *attempts) {
	at.note("no i386/x32 ABI on this architecture")
}

func probeRawIO(a *Args, at *attempts) { rawDevices(at) }
