package cgroups

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	containerd "github.com/containerd/cgroups/v3"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// The cgroup tests re-run this test binary in roles (a memory hog, an
// unprivileged caller, a supervisor in a cgroup of its own): the role is
// chosen by MCPSANDBOX_CGROUP_ROLE and runs in TestCgroupHelperRole.
const roleEnv = "MCPSANDBOX_CGROUP_ROLE"

// waitEnv makes a role wait for a line on stdin first, so that the test can
// move it into cgroups before it does anything.
const waitEnv = "MCPSANDBOX_CGROUP_WAIT"

func TestCgroupHelperRole(t *testing.T) {
	role := os.Getenv(roleEnv)
	if role == "" {
		return // not started as a role
	}
	if os.Getenv(waitEnv) != "" {
		bufio.NewReader(os.Stdin).ReadString('\n')
	}
	var err error
	switch role {
	case "hog":
		err = roleHog()
	case "create":
		err = roleCreate()
	case "info":
		err = json.NewEncoder(os.Stdout).Encode(Info())
	case "v2leaf":
		err = roleV2Leaf()
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "role failed:", err)
		os.Exit(2)
	}
	os.Exit(0)
}

// roleHog waits for a line on stdin (so it can be put in its cgroup first),
// then allocates and touches memory 1 MiB at a time. It gives up at 1 GiB
// and exits 3: the limit under test did not stop it.
func roleHog() error {
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return err
	}
	var chunks [][]byte
	for range 1024 {
		c := make([]byte, 1<<20)
		for i := 0; i < len(c); i += 4096 {
			c[i] = 1
		}
		chunks = append(chunks, c)
	}
	fmt.Println("allocated", len(chunks), "MiB")
	os.Exit(3)
	return nil
}

// roleCreate tries New with the limits in MCPSANDBOX_CGROUP_LIMITS
// ("memory pids cpu [weight]") and prints "OK" or "ERR <message>"; given a
// weight, "weight N" follows OK with the weight the cgroup got.
func roleCreate() error {
	var lim Limits
	fields := strings.Fields(os.Getenv("MCPSANDBOX_CGROUP_LIMITS"))
	if _, err := fmt.Sscan(strings.Join(fields, " "), &lim.Memory, &lim.Pids, &lim.CPU); err != nil {
		return err
	}
	if len(fields) > 3 {
		if _, err := fmt.Sscan(fields[3], &lim.CPUWeight); err != nil {
			return err
		}
	}
	cg, err := New("role", lim)
	if err != nil {
		fmt.Println("ERR", asUserSees(err))
		return nil
	}
	fmt.Println("OK")
	if len(fields) > 3 {
		fmt.Println("weight", cg.CPUWeight())
	}
	return cg.Delete()
}

// helperCmd runs this test binary in role.
func helperCmd(t *testing.T, binary, role string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(binary, "-test.run=^TestCgroupHelperRole$", "-test.count=1")
	cmd.Env = append(os.Environ(), append([]string{roleEnv + "=" + role}, env...)...)
	return cmd
}

func asNobody(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Dir = "/"
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("creating cgroups needs root here (the unprivileged path is tested by running a role as uid 65534)")
	}
}

func requireV1(t *testing.T) {
	t.Helper()
	requireRoot(t)
	if m := containerd.Mode(); m != containerd.Legacy && m != containerd.Hybrid {
		t.Skip("cgroup v1 tests need a v1 or hybrid host")
	}
}

// blockedProcess is a started process that waits for a line on stdin before
// doing its work, so a test can put it in a cgroup first (v1's way of
// joining before running any of its own code).
type blockedProcess struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan error
}

func startBlocked(t *testing.T, cmd *exec.Cmd) *blockedProcess {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &blockedProcess{cmd: cmd, stdin: stdin, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
	})
	return p
}

func (p *blockedProcess) release(t *testing.T) {
	t.Helper()
	if _, err := io.WriteString(p.stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
}

// wait returns how the process ended, failing the test after a deadline.
func (p *blockedProcess) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err // keep it for the cleanup
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("process %d did not end", p.cmd.Process.Pid)
		return nil
	}
}

func killedBy(err error, sig syscall.Signal) bool {
	ee, ok := err.(*exec.ExitError)
	if !ok {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

// waitUntil polls cond until it holds or a deadline passes.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func readTrim(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}

func procsOf(t *testing.T, dir string) []int {
	t.Helper()
	pids, err := readProcs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return pids
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// asUserSees renders err as mcpsandbox's commands do: the host check is
// named as the command that runs it.
func asUserSees(err error) string {
	return field.Message(err, func(f string) string {
		if f == field.Doctor {
			return "`mcpsandbox doctor`"
		}
		return f
	})
}
