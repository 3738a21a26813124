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
// inside them. Not 65534: that is also what unmapped ids look like inside a
// user namespace, so it could hide a missing mapping. It needs no passwd entry.
const sbxUnprivUID = 4242

func TestConfinedUnprivilegedSupervisor(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("this is the unprivileged run itself, or there is no root to prepare it")
	}
	bin := testenv.SelfForOthers(t)
	delegated := sbxDelegateCgroups(t, fmt.Sprintf("mcpsandbox-sbx-unpriv-%d", os.Getpid()), sbxUnprivUID)

	cmd := exec.Command(bin, "-test.run", "^TestConfined", "-test.v", "-test.count=1")
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
		t.Fatalf("the TestConfined* tests failed when run as uid %d: %v", sbxUnprivUID, err)
	}
	if !strings.Contains(out.String(), "--- PASS: TestConfinedIdentity") {
		t.Fatal("the unprivileged run did not run the confinement tests")
	}
}

// sbxWaitEnv makes the test binary wait for a line on stdin before running.
const sbxWaitEnv = "MCPSANDBOX_SBX_WAIT"

// sbxDelegateCgroups creates name beneath this process's own cgroup in each
// v1 controller a server cgroup uses (or in the v2 hierarchy) and hands it
// to uid, as Delegate=yes does. Cleanup removes it with anything inside.
func sbxDelegateCgroups(t *testing.T, name string, uid int) []string {
	t.Helper()
	mounts, err := readV1Mounts()
	if err != nil {
		t.Fatal(err)
	}
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(own)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			paths[c] = parts[2]
		}
	}
	var dirs []string
	for _, c := range []string{"memory", "pids", "cpu", "freezer"} {
		if mounts[c] == "" {
			continue
		}
		dir := filepath.Join(mounts[c], paths[c], name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
		t.Cleanup(func() { sbxRemoveCgroupTree(t, dir) })
		if err := os.Chown(dir, uid, uid); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"cgroup.procs", "tasks"} {
			os.Chown(filepath.Join(dir, f), uid, uid)
		}
	}
	if len(dirs) == 0 {
		t.Skip("no cgroup v1 controllers here; the v2 delegation path is the cgroup tests' concern")
	}
	return dirs
}

// sbxRemoveCgroupTree removes a cgroup directory and its children, deepest
// first; it fails the test when one is still busy.
func sbxRemoveCgroupTree(t *testing.T, dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			sbxRemoveCgroupTree(t, filepath.Join(dir, e.Name()))
		}
	}
	if err := syscall.Rmdir(dir); err != nil && !os.IsNotExist(err) {
		t.Errorf("removing cgroup %s: %v", dir, err)
	}
}

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
