package bench

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/daemon"
)

// Log messages of the daemon the benchmarks wait for.
const (
	msgWarm          = "mcpsandbox daemon: instance warm"
	msgEnded         = "mcpsandbox daemon: instance ended"
	msgPrestartFails = "mcpsandbox daemon: prestart failed; retrying with backoff (logged again only if the reason changes)"
)

// daemonProc is `mcpsandbox daemon` running as hosts would have it: the
// binary, its own process, on a config and socket of its own.
type daemonProc struct {
	cmd    *exec.Cmd
	dir    string
	socket string
	log    *daemonLog
	exited chan struct{}
	err    error // Wait's, once exited is closed
	once   sync.Once
}

// benchStateDir is the state directories' base (MCPSANDBOX_STATE_DIR) of
// every server the daemon benchmarks run, so that a prepared npm cache is
// theirs alone and goes with the run.
func benchStateDir() string { return filepath.Join(bins.dir, "state") }

// startDaemonProc writes config and starts a daemon on it; it returns
// once the daemon listens.
func startDaemonProc(b testing.TB, config string) *daemonProc {
	b.Helper()
	dir, err := os.MkdirTemp(bins.dir, "daemon-")
	if err != nil {
		b.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	cfg := filepath.Join(dir, "servers.json")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		b.Fatal(err)
	}
	logFile := filepath.Join(dir, "daemon.log")
	d := &daemonProc{dir: dir, exited: make(chan struct{})}
	d.cmd = exec.Command(bins.mcpsandbox, "daemon", "--config", cfg, "--socket-dir", filepath.Join(dir, "sock"), "--log-file", logFile)
	d.cmd.Env = append(os.Environ(), "MCPSANDBOX_STATE_DIR="+benchStateDir())
	stderr, err := d.cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := d.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	// Its first line on stderr says where it listens, once it does.
	lines := bufio.NewReader(stderr)
	first, err := lines.ReadString('\n')
	_, rest, ok := strings.Cut(first, "listening on ")
	sock, _, _ := strings.Cut(rest, "; logging to ")
	if err != nil || !ok || !filepath.IsAbs(sock) {
		more, _ := io.ReadAll(lines)
		d.cmd.Wait()
		b.Fatalf("mcpsandbox daemon did not listen: %q%s", first, more)
	}
	d.socket = sock
	go func() {
		io.Copy(os.Stderr, lines)
		d.err = d.cmd.Wait()
		close(d.exited)
	}()
	d.log = followLog(b, logFile)
	b.Cleanup(d.stop)
	return d
}

// stop shuts the daemon down as SIGTERM does (every instance's shutdown)
// and waits for it to exit.
func (d *daemonProc) stop() {
	d.once.Do(func() {
		d.cmd.Process.Signal(syscall.SIGTERM)
		<-d.exited
		d.log.stop()
		os.RemoveAll(d.dir)
	})
}

// status is the daemon's answer to `mcpsandbox status`.
func (d *daemonProc) status(b testing.TB) *daemon.Status {
	b.Helper()
	c, a, err := daemon.Dial(d.socket, daemon.Hello{Control: daemon.ControlStatus})
	if err != nil {
		b.Fatal(err)
	}
	if a.Error != nil {
		b.Fatalf("status refused: %s", a.Error.Reason)
	}
	c.Close()
	return a.Status
}

// waitWarm waits until the daemon logged each server's warm instances
// (warm[name] records in all), then checks that status shows exactly those,
// every one warm; it returns the status.
func (d *daemonProc) waitWarm(b testing.TB, warm map[string]int, limit time.Duration) *daemon.Status {
	b.Helper()
	for name, n := range warm {
		d.log.waitCount(b, msgWarm, name, n, msgPrestartFails, limit)
	}
	st := d.status(b)
	for _, s := range st.Servers {
		n := 0
		for _, i := range s.Instances {
			if i.State != "warm" {
				b.Fatalf("instance %s is %s, not warm; log:\n%s", i.ID, i.State, d.log.tail(20))
			}
			n++
		}
		if want := s.Prestart; n != want {
			b.Fatalf("server %s has %d instances, want its %d warm ones", s.Name, n, want)
		}
	}
	return st
}

// procStatusKiB reads a field of /proc/PID/status given in kB (VmRSS,
// VmHWM).
func procStatusKiB(b testing.TB, pid int, field string) float64 {
	b.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				b.Fatalf("/proc/%d/status: %q", pid, line)
			}
			return kb
		}
	}
	b.Fatalf("/proc/%d/status has no %s", pid, field)
	return 0
}

// userHZ is the unit of /proc/PID/stat's times, fixed at 100 by the
// kernel's ABI.
const userHZ = 100

// cpuTime is a process's CPU time so far, all its threads, user and
// system (/proc/PID/stat's utime and stime).
func cpuTime(b testing.TB, pid int) time.Duration {
	b.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	// The command name in parentheses may hold spaces: fields count from
	// after its closing one (state is field 3, utime 14, stime 15).
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		b.Fatalf("/proc/%d/stat: %q", pid, s)
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			b.Fatalf("/proc/%d/stat: %q", pid, s)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ
}

// tree is pid and its descendants: an instance's pid is the sandbox's
// init, the server its child.
func tree(pid int) []int {
	pids := []int{pid}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, task := range tasks {
		data, _ := os.ReadFile(task)
		for _, f := range strings.Fields(string(data)) {
			if child, err := strconv.Atoi(f); err == nil {
				pids = append(pids, tree(child)...)
			}
		}
	}
	return pids
}

// serversConfig is a Claude Desktop style config of n servers named
// PREFIX1..PREFIXn, each entry given keys (a JSON object's members).
func serversConfig(prefix string, n int, command []string, keys string) string {
	var sb strings.Builder
	sb.WriteString("{\"mcpServers\": {\n")
	for i := 1; i <= n; i++ {
		if i > 1 {
			sb.WriteString(",\n")
		}
		fmt.Fprintf(&sb, "%q: %s", fmt.Sprintf("%s%d", prefix, i), entryJSON(command, keys))
	}
	sb.WriteString("\n}}\n")
	return sb.String()
}

// entryJSON is one entry: command, then args, and keys.
func entryJSON(command []string, keys string) string {
	args := make([]string, len(command)-1)
	for i, a := range command[1:] {
		args[i] = strconv.Quote(a)
	}
	e := fmt.Sprintf("{\"command\": %q, \"args\": [%s]", command[0], strings.Join(args, ", "))
	if keys != "" {
		e += ", " + keys
	}
	return e + "}"
}
