package sandbox

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// TestLocksOnAReadOnlyGrantLastAsLongAsTheServer shows the documented limit
// (doctor's "locks on grants"): a server holds a lock on a file of a --ro
// grant, which the host's lockers find taken, and only for as long as it
// runs.
func TestLocksOnAReadOnlyGrantLastAsLongAsTheServer(t *testing.T) {
	requireConfinement(t)
	dir := testenv.SharedDir(t, "mcpsandbox-locks-")
	file := filepath.Join(dir, "db")
	if err := os.WriteFile(file, []byte("data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := sbxSpec("/usr/bin/flock", "--shared", file, "/bin/sh", "-c", "echo locked; read _")
	spec.ReadOnly = []string{dir}
	p, err := Start(spec, sbxLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	line, err := bufio.NewReader(p.Stdout()).ReadString('\n')
	if line != "locked\n" {
		t.Fatalf("the server did not lock %s: %q %v (%v)", file, line, err, escapeExitSoFar(p))
	}
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); !errors.Is(err, unix.EWOULDBLOCK) {
		t.Fatalf("the host's flock while the server holds its lock: %v, want EWOULDBLOCK (the limit doctor states)", err)
	}
	p.Stdin().Close()
	<-p.Done()
	p.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Errorf("the host's flock once the server ended: %v", err)
	}
}
