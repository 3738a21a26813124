package initstage

import (
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/internal/pathrule"
)

// path.c's path_within gives pathrule.Within's answers on the clean
// absolute paths the supervisor sends the init stage.
func TestCWithinAgreesWithPathrule(t *testing.T) {
	for _, tc := range [][2]string{
		{"/usr", "/usr"}, {"/usr/bin/node", "/usr"}, {"/usrlocal/bin", "/usr"}, {"/us", "/usr"},
		{"/home/a", "/"}, {"/", "/"}, {"/", "/usr"}, {"/a/bc", "/a/b"},
		{"/srv\x00/x", "/srv"}, {"/srv/a\x00b", "/srv"}, // bytes, not C strings
	} {
		if got, want := cWithin(tc[0], tc[1]), pathrule.Within(tc[0], tc[1]); got != want {
			t.Errorf("path_within(%q, %q) = %v, pathrule.Within says %v", tc[0], tc[1], got, want)
		}
	}
}

func FuzzCWithin(f *testing.F) {
	for _, s := range [][2]string{{"/usr/bin", "/usr"}, {"/a/bc", "/a/b"}, {"/x", "/"}, {"/", "/a"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, path, dir string) {
		path, dir = filepath.Clean("/"+path), filepath.Clean("/"+dir)
		if got, want := cWithin(path, dir), pathrule.Within(path, dir); got != want {
			t.Fatalf("path_within(%q, %q) = %v, pathrule.Within says %v", path, dir, got, want)
		}
	})
}

// The capabilities init.h's INIT_CAPS keeps reach SysProcAttr as a list.
func TestInitCapsDecodeTheHeadersSet(t *testing.T) {
	got := initCaps()
	want := []uintptr{unix.CAP_DAC_OVERRIDE, unix.CAP_SETPCAP, unix.CAP_NET_ADMIN, unix.CAP_SYS_ADMIN, unix.CAP_SYS_RESOURCE}
	if !slices.Equal(got, want) {
		t.Errorf("initCaps() = %v, want %v", got, want)
	}
}
