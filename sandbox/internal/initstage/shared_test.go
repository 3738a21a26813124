package initstage

import (
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// path.c's rule, as both the supervisor and the init stage apply it.
func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		path, dir string
		want      bool
	}{
		{"/usr", "/usr", true},
		{"/usr/bin/node", "/usr", true},
		{"/usrlocal/bin", "/usr", false},
		{"/us", "/usr", false},
		{"/tmp/x", "/tmp", true},
		{"/home/a", "/", true},
		{"relative", "/", true},
		{"/", "/usr", false},
		{"/srv\x00/x", "/srv", false}, // bytes, not C strings
		{"/srv/a\x00b", "/srv", true},
		{"", "", true},
		{"/x", "", true},
		{"x", "", false},
	} {
		if got := Within(tc.path, tc.dir); got != tc.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tc.path, tc.dir, got, tc.want)
		}
	}
}

// The capabilities init.h's INIT_CAPS keeps reach SysProcAttr as a list.
func TestInitCapsDecodeTheHeadersSet(t *testing.T) {
	got := initCaps()
	want := []uintptr{unix.CAP_DAC_OVERRIDE, unix.CAP_SETPCAP, unix.CAP_NET_ADMIN, unix.CAP_SYS_ADMIN, unix.CAP_SYS_RESOURCE}
	if !slices.Equal(got, want) {
		t.Errorf("initCaps() = %v, want %v", got, want)
	}
}
