package sandbox

import (
	"bufio"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// initStageReport starts an init stage directly (as launch does), lets
// feed write to its configuration pipe, and returns its first report.
func initStageReport(t *testing.T, feed func(w *os.File)) report {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("starting an init stage in new namespaces needs root")
	}
	cfgR, cfgW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer repR.Close()
	cmd := &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       []string{InitArg0},
		Env:        []string{},
		ExtraFiles: []*os.File{cfgR, repW},
		SysProcAttr: &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL,
			Cloneflags: unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWNET},
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cfgR.Close()
	repW.Close()
	feed(cfgW)
	cfgW.Close()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
		}
	}()
	rep, err := readReport(bufio.NewReader(repR))
	if err != nil {
		t.Fatalf("no report from the init stage: %v", err)
	}
	if err := cmd.Wait(); err == nil || rep.Error == "" {
		t.Errorf("the init stage ended with %v after report %+v: want a failure and an error report", err, rep)
	}
	return rep
}

func TestInitStageRefusesABrokenConfiguration(t *testing.T) {
	valid := func(t *testing.T) *message {
		cfg, err := newInitConfig(sbxSpec("/bin/true"))
		if err != nil {
			t.Fatal(err)
		}
		cfg.UID, cfg.GID, cfg.UserName = 65534, 65534, "nobody"
		m, err := configMessage(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, tc := range []struct {
		name string
		feed func(t *testing.T, w *os.File)
		want string
	}{
		{"nothing sent", func(*testing.T, *os.File) {}, "reading the sandbox configuration: the supervisor closed the pipe"},
		{"record longer than its message", func(t *testing.T, w *os.File) {
			m := &message{}
			m.str(cfgArg, "/bin/true")
			m.buf[1] = 200 // the record claims more than the message holds
			m.writeTo(w)
		}, "reading the sandbox configuration: malformed record"},
		{"unknown record", func(t *testing.T, w *os.File) {
			m := valid(t)
			m.add(99, []byte("x"))
			m.writeTo(w)
		}, "reading the sandbox configuration: malformed record"},
		{"message cut short", func(t *testing.T, w *os.File) {
			var b []byte
			b = binary.LittleEndian.AppendUint32(b, 64)
			w.Write(append(b, "short"...))
		}, "reading the sandbox configuration: the supervisor closed the pipe"},
		{"no cgroup part", func(t *testing.T, w *os.File) {
			valid(t).writeTo(w)
		}, "reading the sandbox's cgroup: the supervisor closed the pipe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := initStageReport(t, func(w *os.File) { tc.feed(t, w) })
			if !strings.Contains(rep.Error, tc.want) {
				t.Errorf("report %q, want %q", rep.Error, tc.want)
			}
		})
	}
}

// Run as mcpsandbox-init outside a sandbox's namespaces, the binary
// refuses before it touches any mount. The test gives it a mount namespace
// of its own anyway, so that a failure here cannot cover the host's /tmp.
func TestInitStageRefusesToRunOutsideASandbox(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a mount namespace of its own needs root")
	}
	cmd := &exec.Cmd{
		Path:        "/proc/self/exe",
		Args:        []string{InitArg0},
		SysProcAttr: &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL},
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("%s outside a pid namespace: %v, want exit status 2; stderr %q", InitArg0, err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "not PID 1") {
		t.Errorf("stderr %q does not say why", stderr.String())
	}
}
