package supervisor_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// If mcpsandbox itself is SIGKILLed, its server dies too: nothing is left
// running that no one supervises. The supervisor runs as a separate process
// (this test binary in the supervisor role).
func TestSIGKILLOfSupervisorLeavesNoServer(t *testing.T) {
	t.Run("confined", func(t *testing.T) { requireConfinement(t); testSIGKILL(t, "confined") })
	t.Run("unconfined", func(t *testing.T) { testSIGKILL(t, "unconfined") })
}

func testSIGKILL(t *testing.T, mode string) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, roleSupervisor, mode)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	pids := make(chan int, 1)
	hung := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if strings.Contains(line, "hanging on request") {
				close(hung)
			}
			var gen, pid int
			if _, err := fmt.Sscanf(line, "EVENT started %d %d", &gen, &pid); err == nil {
				pids <- pid
			}
		}
	}()
	var serverPid int
	select {
	case serverPid = <-pids:
	case <-time.After(waitLimit):
		t.Fatal("the supervisor did not report a started server")
	}
	// A full round trip proves the server is up and serving.
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`+"\n")
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.Contains(line, `"mcpsandbox-example"`) {
		t.Fatalf("initialize through the supervisor process: %q %v", line, err)
	}
	// A hung server does not even read stdin, so it would not notice its
	// supervisor's pipes closing: only the kernel can end it now.
	io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hang","arguments":{}}}`+"\n")
	select {
	case <-hung:
	case <-time.After(waitLimit):
		t.Fatal("the server did not hang")
	}
	if gone(serverPid, 0) {
		t.Fatalf("server pid %d is not running before the kill", serverPid)
	}

	// Every process of the server's tree: the reported pid and whatever
	// runs the example server (inside the sandbox, the reported pid may be
	// its init stage).
	tree := append(examplePids(exe), serverPid)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	for _, pid := range tree {
		if !gone(pid, waitLimit) {
			t.Fatalf("pid %d of the server's tree still runs %s after its supervisor was SIGKILLed", pid, waitLimit)
		}
	}
}

// examplePids lists the processes running exe in the example-server role.
func examplePids(exe string) []int {
	var pids []int
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		var pid int
		if _, err := fmt.Sscanf(d.Name(), "%d", &pid); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		if args := strings.Split(string(cmdline), "\x00"); len(args) > 1 && args[0] == exe && args[1] == roleExampleServer {
			pids = append(pids, pid)
		}
	}
	return pids
}

// gone waits up to timeout for pid to exit (a zombie counts as gone), using
// a pidfd, which becomes readable when the process exits.
func gone(pid int, timeout time.Duration) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err == unix.ESRCH {
		return true
	}
	if err != nil {
		panic(fmt.Sprintf("pidfd_open(%d): %v", pid, err))
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(timeout.Milliseconds()))
		if err == unix.EINTR {
			continue
		}
		return err == nil && n == 1
	}
}
