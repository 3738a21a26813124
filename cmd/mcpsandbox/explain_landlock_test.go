package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// policy explain names the kernel's Landlock ABI and, for a --rw grant
// beneath /tmp, that FIFOs and sockets cannot be made in /tmp either.
func TestExplainSaysWhatLandlockDoes(t *testing.T) {
	r, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	abi := int(r)
	if errno != 0 {
		abi = 0
	}
	rw, err := os.MkdirTemp("/tmp", "mcpsandbox-explain-landlock-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(rw)
	e := explain(t, "--rw", rw, "--net", "host", "--", "/bin/true")
	got := e.text("Landlock")
	t.Log("\n" + got)
	want := []string{"none: no Landlock", "open: under host networking, a server can reach the host's abstract unix sockets"}
	switch {
	case abi >= 6:
		want = []string{fmt.Sprintf("ABI %d: scoping and filesystem", abi), "not in /tmp: the writable grant " + rw}
	case abi >= 2:
		want = []string{fmt.Sprintf("ABI %d: filesystem only", abi), "not in /tmp: the writable grant " + rw, "open: under host networking"}
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("the Landlock section does not say %q", w)
		}
	}
}
