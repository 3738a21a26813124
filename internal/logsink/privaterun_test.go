package logsink

import (
	"flag"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// go-systemd's journal sends to the fixed path /run/systemd/journal/socket.
// The journal tests run in a re-executed test binary with a mount namespace
// of its own and a tmpfs on /run, so they own that path without touching
// the host's /run: a socket of their own there, or a real journald.

const (
	privateRunEnv = "LOGSINK_PRIVATE_RUN" // set in the re-executed binary
	realRootEnv   = "LOGSINK_REAL_ROOT"   // and this when it runs as root outside a user namespace
	journalDir    = "/run/systemd/journal"
	journalSocket = journalDir + "/socket"
)

// inPrivateRun reports whether this is the re-executed binary, /run its own.
// If not, it runs t's test there (root: a mount namespace; otherwise also a
// user namespace mapping this user to root, skipping where there is none)
// and reports its outcome on t.
func inPrivateRun(t *testing.T) bool {
	t.Helper()
	if os.Getenv(privateRunEnv) != "" {
		if err := syscall.Mount("tmpfs", "/run", "tmpfs", 0, "mode=0755"); err != nil {
			t.Fatalf("tmpfs on /run in the test's mount namespace: %v", err)
		}
		return true
	}
	run := "^" + t.Name() + "$"
	if f := flag.Lookup("test.run"); f != nil && strings.Contains(f.Value.String(), "/") {
		run = f.Value.String() // a subtest named on the command line
	}
	cmd := exec.Command(os.Args[0], "-test.run="+run, "-test.v", "-test.count=1")
	if testing.Short() {
		cmd.Args = append(cmd.Args, "-test.short")
	}
	cmd.Env = append(os.Environ(), privateRunEnv+"=1")
	if os.Geteuid() == 0 {
		cmd.Env = append(cmd.Env, realRootEnv+"=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}},
			Pdeathsig:   syscall.SIGKILL,
		}
	}
	out, err := cmd.CombinedOutput()
	if _, started := err.(*exec.ExitError); err != nil && !started {
		t.Skipf("no mount namespace for the journal tests (%v): they need root or user namespaces", err)
	}
	t.Logf("in a private /run:\n%s", out)
	if err != nil {
		t.Fatalf("the test in a private /run failed: %v", err)
	}
	if !strings.Contains(string(out), "=== RUN   "+t.Name()) {
		t.Fatalf("the re-executed test binary ran no %s", t.Name())
	}
	return false
}

// privateJournalDir puts an empty tmpfs on /run/systemd/journal for one
// test, so the next finds no socket of this one's.
func privateJournalDir(t *testing.T) {
	t.Helper()
	if err := os.MkdirAll(journalDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", journalDir, "tmpfs", 0, "mode=0755"); err != nil {
		t.Fatalf("tmpfs on %s: %v", journalDir, err)
	}
	t.Cleanup(func() { syscall.Unmount(journalDir, syscall.MNT_DETACH) })
}
