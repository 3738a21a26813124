package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// What a server may write: the size of one file (FileSize), and what it
// may run of what it wrote (NoExecTmp). A full disk is told as the reason
// the server ended.

func TestConfinedFileSizeLimitKillsAndIsTheReason(t *testing.T) {
	requireConfinement(t)
	testenv.OuterLimit(t, 512<<20, 256)
	spec := sbxSpec("/bin/sh", "-c", "exec dd if=/dev/zero of=/tmp/big bs=64k count=64")
	spec.FileSize = 1 << 20
	_, errOut, ex := sbxRun(t, spec)
	if ex.Signal != syscall.SIGXFSZ {
		t.Fatalf("writing 4MiB past a 1MiB FileSize ended %v, want killed by SIGXFSZ\n%s", ex, errOut)
	}
	if !strings.Contains(ex.String(), "file size limit") {
		t.Errorf("the exit reads %q; it should name the file size limit", ex)
	}
	// Without a limit the same write succeeds.
	spec.FileSize = 0
	sbxShell(t, spec, "dd if=/dev/zero of=/tmp/big bs=64k count=64 2>/dev/null")
}

func TestConfinedFileSizeMustNotBeNegative(t *testing.T) {
	spec := sbxSpec("/bin/true")
	spec.FileSize = -1
	_, err := Start(spec, sbxLogger(t))
	var fe *field.Error
	if !errors.As(err, &fe) || fe.Field != "FileSize" {
		t.Fatalf("Start with FileSize -1: %v, want a FileSize error", err)
	}
}

func TestConfinedFullDiskIsTheReason(t *testing.T) {
	requireConfinement(t)
	testenv.OuterLimit(t, 512<<20, 256)
	spec := sbxSpec("/bin/sh", "-c", "cat /dev/zero > /tmp/fill; exit 3")
	spec.TmpSize = 1 << 20
	_, _, ex := sbxRun(t, spec)
	if ex.Code != 3 || ex.DiskFull != "/tmp" {
		t.Fatalf("a server that filled /tmp and failed ended %#v, want status 3 with /tmp full", ex)
	}
	if !strings.Contains(ex.String(), "/tmp was full") {
		t.Errorf("the exit reads %q; it should say /tmp was full", ex)
	}
	// A server that fails with room left is not said to have filled anything.
	spec.Args = []string{"/bin/sh", "-c", "exit 3"}
	if _, _, ex := sbxRun(t, spec); ex.DiskFull != "" {
		t.Errorf("a failed server with room left: %v", ex)
	}
}

func TestConfinedNoExecTmp(t *testing.T) {
	requireConfinement(t)
	script := `cp /bin/true /tmp/t && cp /bin/true "$HOME/t" && /tmp/t && "$HOME/t" && echo ran`
	spec := sbxSpec()
	if out := sbxShell(t, spec, script); !strings.Contains(out, "ran") {
		t.Fatalf("without NoExecTmp, programs copied to /tmp and HOME should run: %q", out)
	}
	spec.NoExecTmp = true
	for _, dir := range []string{"/tmp", "$HOME"} {
		spec.Args = []string{"/bin/sh", "-c", "cp /bin/true " + dir + "/t && exec " + dir + "/t"}
		out, errOut, ex := sbxRun(t, spec)
		if !ex.Failed() || !strings.Contains(errOut, "ermission denied") {
			t.Errorf("NoExecTmp: a program copied to %s ran (%v): %s%s", dir, ex, out, errOut)
		}
	}
	// /dev/shm never runs programs.
	spec.NoExecTmp = false
	spec.Args = []string{"/bin/sh", "-c", "cp /bin/true /dev/shm/t && exec /dev/shm/t"}
	if _, errOut, ex := sbxRun(t, spec); !ex.Failed() {
		t.Errorf("a program copied to /dev/shm ran: %s", errOut)
	}
}

// A grant the server could not use is refused before it starts, naming
// the grant, its owner and mode, the server's uid and the fix, rather than
// left for the server to meet as EACCES.
func TestConfinedGrantTheServerCannotUseIsRefused(t *testing.T) {
	requireConfinement(t)
	base := t.TempDir()
	for _, c := range []struct {
		field string
		mode  os.FileMode
		verb  string
	}{
		{"ReadWrite", 0o500, "may not read and write it"},
		{"ReadOnly", 0o000, "may not read it"},
	} {
		dir := filepath.Join(base, c.field)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, c.mode); err != nil {
			t.Fatal(err)
		}
		spec := sbxSpec("/bin/true")
		if c.field == "ReadWrite" {
			spec.ReadWrite = []string{dir}
		} else {
			spec.ReadOnly = []string{dir}
		}
		p, err := Start(spec, sbxLogger(t))
		if err == nil {
			p.Close()
			t.Errorf("%s %s (mode %o): the server started", c.field, dir, c.mode)
			continue
		}
		var fe *field.Error
		if !errors.As(err, &fe) || fe.Field != c.field || fe.Value != dir {
			t.Errorf("%s %s: %v; want a %s error for it", c.field, dir, err, c.field)
			continue
		}
		owner := fmt.Sprintf("owned by %d:%d with mode %o", os.Geteuid(), os.Getegid(), c.mode)
		for _, want := range []string{owner, c.verb, "chmod"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the refusal %q lacks %q", err, want)
			}
		}
	}
}
