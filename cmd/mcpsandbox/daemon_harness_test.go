package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/daemon"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// A daemon as users run it: `mcpsandbox daemon` (this test binary as the
// CLI) in a process of its own, logging to a file, seen and steered with
// the CLI's own commands (status --json, reload, connect) on its
// --socket-dir. Every wait polls what the daemon shows, to a deadline.

// e2eWait bounds each wait on a daemon: confined node servers start in
// a second or two; fifty example servers share two cores.
var e2eWait = testenv.Wait(2 * time.Minute)

// e2eDaemon is one `mcpsandbox daemon` process.
type e2eDaemon struct {
	t       *testing.T
	config  string // the config file
	sockets string // its --socket-dir
	logFile string // its --log-file
	env     []string
	cmd     *exec.Cmd
	stderr  *testenv.LogCapture
	exited  chan struct{}
}

// daemonEntry is a config entry, its keys as JSON members.
type daemonEntry struct {
	name string
	keys map[string]any
}

// exampleEntry is an entry of the example server (this test binary in its
// role): a Go SDK v1.8 server, which speaks both session styles.
func exampleEntry(t *testing.T, name string, keys map[string]any) daemonEntry {
	t.Helper()
	e := daemonEntry{name: name, keys: map[string]any{"command": self(t), "args": []string{asExampleServer}}}
	for k, v := range keys {
		e.keys[k] = v
	}
	return e
}

// claudeConfig is a Claude Desktop shaped file of the entries, in order.
func claudeConfig(t *testing.T, entries ...daemonEntry) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("{\"mcpServers\": {\n")
	for i, e := range entries {
		keys, err := json.Marshal(e.keys)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, "  %q: %s", e.name, keys)
	}
	b.WriteString("\n}}\n")
	return b.String()
}

// startE2EDaemon writes config and starts `mcpsandbox daemon` on it with
// env (nil: the test's), once it says it listens. Cleanup stops it with
// SIGTERM and checks that none of its servers' processes is left.
func startE2EDaemon(t *testing.T, config string, env []string, flags ...string) *e2eDaemon {
	t.Helper()
	// Any user may enter it: a test's client of another uid needs to.
	dir := testenv.SharedDir(t, "mcpsandbox-e2e-daemon-")
	if env == nil {
		env = os.Environ()
	}
	d := &e2eDaemon{
		t:       t,
		config:  filepath.Join(dir, "servers.json"),
		sockets: filepath.Join(dir, "run"),
		logFile: filepath.Join(dir, "daemon.log"),
		env:     env,
		stderr:  testenv.NewLogCapture(t),
	}
	d.write(config)
	args := append([]string{asCLI, "daemon", "--config", d.config, "--socket-dir", d.sockets, "--log-file", d.logFile}, flags...)
	d.cmd = exec.Command(self(t), args...)
	d.cmd.Env = env
	var listening chan struct{}
	listening, d.exited = startDaemonProcess(t, d.cmd, d.stderr)
	t.Cleanup(d.stop)
	awaitListening(t, "mcpsandbox daemon", d.cmd, d.stderr, listening, d.exited, e2eWait)
	return d
}

// stop ends the daemon as a service manager would (SIGTERM) and checks
// that it exited 0 and took every server process with it.
func (d *e2eDaemon) stop() {
	t := d.t
	select {
	case <-d.exited:
		return
	default:
	}
	var pids []int
	if st, err := d.tryStatus(); err == nil {
		pids = serverPids(st)
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(e2eWait):
		t.Errorf("mcpsandbox daemon did not stop within %v of SIGTERM; killing it", e2eWait)
		d.cmd.Process.Kill()
		<-d.exited
	}
	if code := d.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("mcpsandbox daemon exited %d after SIGTERM, want 0", code)
	}
	deadline := time.Now().Add(testenv.Wait(10 * time.Second))
	for _, pid := range pids {
		for processExists(pid) {
			if time.Now().After(deadline) {
				t.Errorf("server process %d outlived its daemon", pid)
				break
			}
			time.Sleep(10 * time.Millisecond) // a killed process takes a moment to be reaped
		}
	}
	if t.Failed() {
		t.Logf("daemon log %s:\n%s", d.logFile, d.log())
	}
}

// processExists: a process of another uid answers EPERM, not ESRCH.
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// write replaces the config file.
func (d *e2eDaemon) write(config string) {
	d.t.Helper()
	if err := os.WriteFile(d.config, []byte(config), 0o644); err != nil {
		d.t.Fatal(err)
	}
}

// cli runs `mcpsandbox ARGS --socket-dir DIR` to its end.
func (d *e2eDaemon) cli(args ...string) (stdout, stderr string, err error) {
	cmd := exec.Command(self(d.t), append(append([]string{asCLI}, args...), "--socket-dir", d.sockets)...)
	cmd.Env = d.env
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// connectArgv is the command line a host runs for the daemon's server
// name: `mcpsandbox connect NAME --socket-dir DIR`.
func (d *e2eDaemon) connectArgv(name string) []string {
	return []string{self(d.t), asCLI, "connect", name, "--socket-dir", d.sockets}
}

func (d *e2eDaemon) tryStatus() (*daemon.Status, error) {
	out, errOut, err := d.cli("status", "--json")
	if err != nil {
		return nil, fmt.Errorf("mcpsandbox status --json: %v: %s", err, errOut)
	}
	var st daemon.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		return nil, fmt.Errorf("mcpsandbox status --json printed %q: %v", out, err)
	}
	return &st, nil
}

// status is `mcpsandbox status --json`.
func (d *e2eDaemon) status() *daemon.Status {
	d.t.Helper()
	st, err := d.tryStatus()
	if err != nil {
		d.t.Fatal(err)
	}
	return st
}

// waitStatus polls status until ok holds, and returns that status.
func (d *e2eDaemon) waitStatus(what string, ok func(*daemon.Status) bool) *daemon.Status {
	d.t.Helper()
	deadline := time.Now().Add(e2eWait)
	for {
		st := d.status()
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			b, _ := json.MarshalIndent(st, "", "  ")
			d.t.Fatalf("status never showed %s within %v; last status:\n%s", what, e2eWait, b)
		}
		time.Sleep(50 * time.Millisecond) // the poll's period
	}
}

// log is the daemon's log file so far.
func (d *e2eDaemon) log() string {
	data, _ := os.ReadFile(d.logFile)
	return string(data)
}

// logLines are the log's lines holding every one of words.
func (d *e2eDaemon) logLines(words ...string) []string {
	var lines []string
	for line := range strings.SplitSeq(d.log(), "\n") {
		all := true
		for _, w := range words {
			all = all && strings.Contains(line, w)
		}
		if all && line != "" {
			lines = append(lines, line)
		}
	}
	return lines
}

// waitLog polls the log until a line holds every one of words, and
// returns it.
func (d *e2eDaemon) waitLog(words ...string) string {
	d.t.Helper()
	deadline := time.Now().Add(e2eWait)
	for {
		if lines := d.logLines(words...); len(lines) > 0 {
			return lines[0]
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("the daemon's log has no line with %q within %v; log:\n%s", words, e2eWait, d.log())
		}
		time.Sleep(20 * time.Millisecond) // the poll's period
	}
}

// logValue is the value of key=VALUE in a text log line ("" if absent).
func logValue(line, key string) string {
	i := strings.Index(line, " "+key+"=")
	if i < 0 {
		return ""
	}
	v := line[i+len(key)+2:]
	if strings.HasPrefix(v, `"`) {
		var s string
		if _, err := fmt.Sscanf(v, "%q", &s); err == nil {
			return s
		}
	}
	if j := strings.IndexByte(v, ' '); j >= 0 {
		v = v[:j]
	}
	return v
}

// serverPids are the server processes status shows.
func serverPids(st *daemon.Status) []int {
	var pids []int
	for _, s := range st.Servers {
		for _, i := range s.Instances {
			if i.Pid != 0 {
				pids = append(pids, i.Pid)
			}
		}
	}
	return pids
}

// instanceByID finds an instance in status.
func instanceByID(st *daemon.Status, id string) (daemon.InstanceStatus, bool) {
	for _, s := range st.Servers {
		for _, i := range s.Instances {
			if i.ID == id {
				return i, true
			}
		}
	}
	return daemon.InstanceStatus{}, false
}

// instanceOfClient finds the instance serving the `connect` process pid.
func instanceOfClient(st *daemon.Status, pid int) (daemon.InstanceStatus, bool) {
	for _, s := range st.Servers {
		for _, i := range s.Instances {
			if i.ClientPid != nil && *i.ClientPid == pid {
				return i, true
			}
		}
	}
	return daemon.InstanceStatus{}, false
}

// serverStatus is the named server's status.
func serverStatus(st *daemon.Status, name string) (daemon.ServerStatus, bool) {
	for _, s := range st.Servers {
		if s.Name == name {
			return s, true
		}
	}
	return daemon.ServerStatus{}, false
}

// attachedInstance waits until the client whose connect process is pid
// has a running instance, and returns it.
func (d *e2eDaemon) attachedInstance(pid int) daemon.InstanceStatus {
	d.t.Helper()
	var inst daemon.InstanceStatus
	d.waitStatus(fmt.Sprintf("a running instance for connect pid %d", pid), func(st *daemon.Status) bool {
		i, ok := instanceOfClient(st, pid)
		inst = i
		return ok && i.State == "running" && i.Pid != 0
	})
	return inst
}

// killServer kills the server process of instance inst (SIGKILL, as a
// crash) and waits until status shows it restarted: a new process,
// running, one restart more.
func (d *e2eDaemon) killServer(inst daemon.InstanceStatus) daemon.InstanceStatus {
	d.t.Helper()
	if err := syscall.Kill(inst.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		d.t.Fatalf("killing %s's server process %d: %v", inst.ID, inst.Pid, err)
	}
	var after daemon.InstanceStatus
	d.waitStatus(fmt.Sprintf("%s restarted after its process %d was killed", inst.ID, inst.Pid), func(st *daemon.Status) bool {
		i, ok := instanceByID(st, inst.ID)
		after = i
		return ok && i.State == "running" && i.Pid != 0 && i.Pid != inst.Pid && i.Restarts == inst.Restarts+1
	})
	return after
}
