package sandbox

import (
	"bytes"
	"fmt"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The unprivileged path: a supervisor that is not root confines servers in
// a user namespace mapping its own uid. This test (as root) prepares what an
// administrator or systemd (Delegate=yes) would — cgroups the user may
// manage — and runs every TestConfined* test again as an unprivileged uid
// inside them (testenv.UnprivUID says why that uid).
const sbxUnprivUID = testenv.UnprivUID

func TestConfinedUnprivilegedSupervisor(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("this is the unprivileged run itself, or there is no root to prepare it")
	}
	sbxRunUnprivileged(t, "^TestConfined", "TestConfinedIdentity")
}

// sbxRunUnprivileged runs the tests that pattern selects again as the
// unprivileged uid, in cgroups delegated to it, and fails unless they pass
// and must (one of them) ran.
func sbxRunUnprivileged(t *testing.T, pattern, must string) {
	bin := testenv.SelfForOthers(t)
	delegated := testenv.DelegateV1Cgroups(t, fmt.Sprintf("mcpsandbox-sbx-unpriv-%d", os.Getpid()), sbxUnprivUID)

	cmd := exec.Command(bin, "-test.run", pattern, "-test.v", "-test.count=1")
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "TMPDIR=/tmp"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: sbxUnprivUID, Gid: sbxUnprivUID}}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// The child waits for a line on stdin so it can be moved into the
	// delegated cgroups before it does anything.
	release, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(cmd.Env, sbxWaitEnv+"=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for _, dir := range delegated {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(fmt.Sprint(cmd.Process.Pid)), 0); err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("moving the unprivileged supervisor into %s: %v", dir, err)
		}
	}
	io.WriteString(release, "go\n")
	release.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(5 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the unprivileged run did not finish:\n%s", out.String())
	}
	t.Logf("unprivileged run (uid %d):\n%s", sbxUnprivUID, out.String())
	if err != nil {
		t.Fatalf("the %s tests failed when run as uid %d: %v", pattern, sbxUnprivUID, err)
	}
	if !strings.Contains(out.String(), "--- PASS: "+must) {
		t.Fatalf("the unprivileged run did not run %s", must)
	}
}

// sbxWaitEnv makes the test binary wait for a line on stdin before running.
const sbxWaitEnv = "MCPSANDBOX_SBX_WAIT"

// sbxStartRoleEnv makes the test binary start one confined /bin/true and
// print "started" or the error.
const sbxStartRoleEnv = "MCPSANDBOX_SBX_START"

func sbxStartRole() int {
	p, err := Start(sbxSpec("/bin/true"), slog.New(slog.DiscardHandler))
	if err != nil {
		fmt.Println(err)
		return 0
	}
	p.Close()
	fmt.Println("started")
	return 0
}

// Without a cgroup it may manage, an unprivileged supervisor must refuse to
// start servers rather than run them without memory and pids limits.
func TestConfinedUnprivilegedWithoutCgroupFailsClosed(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to start the unprivileged supervisor")
	}
	cmd := sbxUnprivRole(t, sbxStartRoleEnv)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	msg := string(out)
	if strings.Contains(msg, "started") {
		t.Fatal("an unprivileged supervisor without a delegated cgroup started a server")
	}
	if !strings.Contains(msg, "cgroup") || !strings.Contains(msg, "cannot be enforced") {
		t.Errorf("refusal does not say what is missing: %s", msg)
	}
	t.Log(msg)
}

// sbxUnprivRole runs a copy of the test binary as the unprivileged test uid
// in the role that roleEnv selects, with a bare environment.
func sbxUnprivRole(t *testing.T, roleEnv string) *exec.Cmd {
	cmd := exec.Command(testenv.SelfForOthers(t))
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin", roleEnv + "=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: sbxUnprivUID, Gid: sbxUnprivUID}}
	return cmd
}
