package initstage

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/pathrule"

	"golang.org/x/sys/unix"
)

// testConfig is a configuration for running args as nobody, resolved as
// package sandbox resolves a Spec without grants (no seccomp program).
func testConfig(t *testing.T, args ...string) *Config {
	t.Helper()
	exe, err := exec.LookPath(args[0])
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		t.Fatal(err)
	}
	return &Config{
		Args: args, Exe: exe, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + Home}, Dir: Home,
		ExeBind: !pathrule.Within(exe, "/usr"), TmpSize: 8 << 20, NoFile: 256, UID: 65534, GID: 65534,
	}
}

// startInitStage starts an init stage directly, with the namespaces and
// attributes Exec gives one for cfg, and the server's stdout to stdout.
// feed writes its configuration; the stage is killed after 30s. It returns
// the stage and its reports.
func startInitStage(t *testing.T, cfg *Config, stdout io.Writer, feed func(w *os.File)) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	cmd, cfgW, repR := execInitStage(t, cfg, stdout)
	timer := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	t.Cleanup(func() { timer.Stop() })
	feed(cfgW)
	cfgW.Close()
	return cmd, bufio.NewReader(repR)
}

// execInitStage starts an init stage as startInitStage does, with extra
// as its descriptors from fd 5 on, and returns it, the write end of its
// configuration pipe and the read end of its reports.
func execInitStage(t *testing.T, cfg *Config, stdout io.Writer, extra ...*os.File) (cmd *exec.Cmd, cfgW, repR *os.File) {
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
	t.Cleanup(func() { repR.Close() })
	cmd = &exec.Cmd{
		Path:        "/proc/self/exe",
		Args:        []string{Arg0},
		Env:         []string{},
		Stdout:      stdout,
		ExtraFiles:  append([]*os.File{cfgR, repW}, extra...),
		SysProcAttr: sysProcAttr(cfg, -1),
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cfgR.Close()
	repW.Close()
	return cmd, cfgW, repR
}

// initStageReport starts an init stage, lets feed write to its
// configuration pipe, and returns its first report, which must be an error.
func initStageReport(t *testing.T, feed func(w *os.File)) Report {
	t.Helper()
	cmd, reports := startInitStage(t, &Config{}, nil, feed)
	rep, err := ReadReport(reports)
	if err != nil {
		t.Fatalf("no report from the init stage: %v", err)
	}
	if err := cmd.Wait(); err == nil || rep.Error == "" {
		t.Errorf("the init stage ended with %v after report %+v: want a failure and an error report", err, rep)
	}
	return rep
}

func TestInitStageRefusesABrokenConfiguration(t *testing.T) {
	valid := func(t *testing.T) *Message {
		m, err := testConfig(t, "/bin/true").Encode()
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
			m := &Message{}
			m.str(cfgArg, "/bin/true")
			m.buf[1] = 200 // the record claims more than the message holds
			m.Send(w)
		}, "reading the sandbox configuration: malformed record"},
		{"unknown record", func(t *testing.T, w *os.File) {
			m := valid(t)
			m.add(99, []byte("x"))
			m.Send(w)
		}, "reading the sandbox configuration: malformed record"},
		{"message cut short", func(t *testing.T, w *os.File) {
			var b []byte
			b = binary.LittleEndian.AppendUint32(b, 64)
			w.Write(append(b, "short"...))
		}, "reading the sandbox configuration: the supervisor closed the pipe"},
		{"no cgroup part", func(t *testing.T, w *os.File) {
			valid(t).Send(w)
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
		Args:        []string{Arg0},
		SysProcAttr: &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL},
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("%s outside a pid namespace: %v, want exit status 2; stderr %q", Arg0, err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "not PID 1") {
		t.Errorf("stderr %q does not say why", stderr.String())
	}
}

// runInitStage starts an init stage with cfg (cgroup joins and all) and
// returns the server's output and how it ended.
func runInitStage(t *testing.T, cfg *Config) (string, Report) {
	t.Helper()
	msg, err := cfg.Encode()
	if err != nil {
		t.Fatal(err)
	}
	var stdout strings.Builder
	cmd, reports := startInitStage(t, cfg, &stdout, func(w *os.File) {
		msg.Send(w)
		cfg.EncodeCgroup().Send(w)
	})
	var last Report
	for {
		rep, err := ReadReport(reports)
		if err != nil {
			break
		}
		last = rep
	}
	cmd.Wait()
	return stdout.String(), last
}

// cgroup v2 shows the server's cgroup directory as /sys/fs/cgroup itself.
// This host's cgroups are v1 apart from an unified hierarchy holding no
// controllers of use, so the view is built here from that hierarchy's
// root: what the init stage does with a v2 cgroup runs for real, the
// limits in it do not (package sandbox's TestCgroupV2LimitFilesInScratchTree covers those).
func TestInitStageShowsACgroupV2View(t *testing.T) {
	unified := "/sys/fs/cgroup/unified"
	var st unix.Statfs_t
	if err := unix.Statfs(unified, &st); err != nil || st.Type != unix.CGROUP2_SUPER_MAGIC {
		unified = "/sys/fs/cgroup"
		if err := unix.Statfs(unified, &st); err != nil || st.Type != unix.CGROUP2_SUPER_MAGIC {
			t.Skip("no cgroup2 hierarchy mounted")
		}
	}
	script := `ls /sys; ls /sys/fs; stat -f -c 'type %T' /sys/fs/cgroup
test -f /sys/fs/cgroup/cgroup.procs && echo has-cgroup.procs
(echo 0 > /sys/fs/cgroup/cgroup.procs) 2>&1 | grep -o 'Read-only file system'`
	cfg := testConfig(t, "/bin/sh", "-c", script)
	cfg.CgroupView = []CgroupDir{{Dir: unified}}
	out, rep := runInitStage(t, cfg)
	if !rep.Exited || rep.Code != 0 {
		t.Fatalf("the server ended with %+v; output %q", rep, out)
	}
	want := "fs\ncgroup\ntype cgroup2fs\nhas-cgroup.procs\nRead-only file system\n"
	if out != want {
		t.Errorf("inside, /sys shows %q, want %q (only fs/cgroup, the v2 directory itself, read-only)", out, want)
	}
}
