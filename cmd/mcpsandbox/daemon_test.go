package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// The examples of the daemon's commands' manuals work as written, from a
// shell whose HOME holds ~/.config/mcpsandbox/daemon.json with a server
// notes (the example server, one instance kept warm): the daemon, a host
// through connect, then status, restart (the host's session carries on),
// logs and reload. status --json's keys are each documented in
// docs/daemon.md.
func TestDaemonHelpExamplesRunAsWritten(t *testing.T) {
	requireConfinement(t)
	home, env := daemonHome(t)
	writeTree(t, home, map[string]string{".config/mcpsandbox/daemon.json": fmt.Sprintf(
		`{"mcpServers": {"notes": {"command": %q, "args": [%q], "prestart": 1}}}`, self(t), asExampleServer)})

	var host *mcpsandbox
	checks := map[string]func(line, out string){
		"daemon": nil, // started below
		"connect": func(line, _ string) {
			host, _ = mustHost(t, home, env, "sh", "-c", line)
			if tools := host.tools(t); !slices.Contains(tools, "echo") {
				t.Errorf("%s: tools/list %v", line, tools)
			}
		},
		"status": func(line, out string) {
			for _, want := range []string{"notes: policy default", "prestart 1", "notes#1", "running", "uid "} {
				if !strings.Contains(out, want) {
					t.Errorf("%s does not show %q:\n%s", line, want, out)
				}
			}
		},
		"restart": func(line, out string) {
			if !strings.Contains(out, "restarted notes#1") {
				t.Errorf("%s: %q", line, out)
			}
			if got := host.call(t, "echo", map[string]any{"text": "after"}); got != "after" {
				t.Errorf("the host's session after %s: %q", line, got)
			}
		},
		"logs": func(line, out string) {
			wantIn(t, line, out, "instance=notes#1", `msg="server started"`, "restart requested by uid")
		},
		"reload": func(line, out string) { wantIn(t, line, out, "unchanged: notes") },
	}
	var daemon *cliDaemon
	for _, line := range helpExamples(t, "daemon", "connect", "status", "restart", "logs", "reload") {
		cmd := strings.Fields(line)[1]
		check, ok := checks[cmd]
		if !ok {
			t.Errorf("no check for the example %q", line)
			continue
		}
		delete(checks, cmd)
		if cmd == "daemon" {
			daemon = startCLIDaemon(t, home, env, line)
			continue
		}
		if daemon == nil {
			t.Fatalf("%s: the daemon's example comes first", line)
		}
		if cmd == "connect" {
			check(line, "")
			continue
		}
		check(line, shell(t, home, env, line))
	}
	if len(checks) > 0 {
		t.Errorf("commands without an example: %v", checks)
	}
	undocumentedStatusKeys(t, shell(t, home, env, "mcpsandbox status --json"))
	host.close(t)
	daemon.stop(t)
}

// connect to a server no daemon has answers the host's initialize with
// -31111, the reason on stderr too, and exits 1 once the host leaves.
func TestConnectWithoutTheServerAnswersUnavailable(t *testing.T) {
	home, env := daemonHome(t)
	m, _, err := host(t, home, env, nil, "mcpsandbox", "connect", "--socket-dir", filepath.Join(home, "nowhere"), "notes")
	we, ok := rpcError(err)
	if !ok || we.Code != -31111 || we.Message != "server unavailable" || !strings.Contains(string(we.Data), "mcpsandbox daemon --config FILE") {
		t.Fatalf("initialize: %v (data %s)", err, func() []byte {
			if ok {
				return we.Data
			}
			return nil
		}())
	}
	if code := m.wait(t); code != exitFailure {
		t.Errorf("exit status %d, want %d", code, exitFailure)
	}
	if !m.stderr.Contains("mcpsandbox connect notes: server unavailable: no mcpsandbox daemon is running") {
		t.Errorf("stderr: %s", m.stderr)
	}
}

// daemonHome is a friction home for the daemon's commands: a user's daemon
// gets an XDG_RUNTIME_DIR of its own (root's listens in /run/mcpsandbox).
func daemonHome(t *testing.T) (string, []string) {
	t.Helper()
	home, env := frictionHome(t)
	if os.Geteuid() != 0 {
		run := filepath.Join(t.TempDir(), "run")
		if err := os.Mkdir(run, 0o700); err != nil {
			t.Fatal(err)
		}
		env = append(env, "XDG_RUNTIME_DIR="+run)
	}
	return home, env
}

// helpExamples are the example commands of the manuals of cmds.
func helpExamples(t *testing.T, cmds ...string) []string {
	t.Helper()
	var lines []string
	for _, cmd := range cmds {
		out, _, code := runCLI(t, "help", cmd)
		_, examples, ok := strings.Cut(out, "\nEXAMPLES\n")
		if code != exitOK || !ok {
			t.Fatalf("mcpsandbox help %s: exit %d, no EXAMPLES", cmd, code)
		}
		for _, line := range strings.Split(examples, "\n") {
			if strings.HasPrefix(line, "        mcpsandbox ") {
				lines = append(lines, strings.TrimSpace(line))
			}
		}
	}
	return lines
}

// shell runs line in sh from dir and returns its stdout; it must exit 0.
func shell(t *testing.T, dir string, env []string, line string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir, cmd.Env = dir, env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, stderr.String())
	}
	return string(out)
}

func wantIn(t *testing.T, line, out string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("%s does not show %q:\n%s", line, want, out)
		}
	}
}

// cliDaemon is `mcpsandbox daemon` started from a shell.
type cliDaemon struct {
	cmd    *exec.Cmd
	stderr *testenv.LogCapture
	exited chan struct{}
}

// startCLIDaemon runs line (a daemon's command line) and returns once the
// daemon says it listens.
func startCLIDaemon(t *testing.T, dir string, env []string, line string) *cliDaemon {
	t.Helper()
	d := &cliDaemon{cmd: exec.Command("sh", "-c", "exec "+strings.TrimSuffix(strings.TrimSpace(line), "&")), stderr: testenv.NewLogCapture(t)}
	d.cmd.Dir, d.cmd.Env = dir, env
	var listening chan struct{}
	listening, d.exited = startDaemonProcess(t, d.cmd, d.stderr)
	t.Cleanup(func() {
		d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.exited:
		case <-time.After(waitLimit):
			d.cmd.Process.Kill()
		}
	})
	awaitListening(t, line, d.cmd, d.stderr, listening, d.exited, waitLimit)
	return d
}

// startDaemonProcess starts cmd, a daemon, copying its stderr line by line
// into log: listening closes when it says it listens, exited once it has
// exited and been waited for.
func startDaemonProcess(t *testing.T, cmd *exec.Cmd, log *testenv.LogCapture) (listening, exited chan struct{}) {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	listening, exited = make(chan struct{}), make(chan struct{})
	go func() {
		s := bufio.NewScanner(stderr)
		said := false
		for s.Scan() {
			log.Write([]byte(s.Text() + "\n"))
			if !said && strings.Contains(s.Text(), "mcpsandbox daemon: listening on ") {
				said = true
				close(listening)
			}
		}
		cmd.Wait()
		close(exited)
	}()
	return listening, exited
}

// awaitListening fails t unless the daemon what says it listens before it
// exits and within limit.
func awaitListening(t *testing.T, what string, cmd *exec.Cmd, log *testenv.LogCapture, listening, exited chan struct{}, limit time.Duration) {
	t.Helper()
	select {
	case <-listening:
	case <-exited:
		t.Fatalf("%s exited with %v before it listened; stderr:\n%s", what, cmd.ProcessState, log)
	case <-time.After(limit):
		t.Fatalf("%s did not listen within %v; stderr:\n%s", what, limit, log)
	}
}

// stop sends SIGTERM and waits for exit status 0.
func (d *cliDaemon) stop(t *testing.T) {
	t.Helper()
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(waitLimit):
		t.Fatalf("the daemon did not stop: %s", d.stderr)
	}
	if code := d.cmd.ProcessState.ExitCode(); code != exitOK {
		t.Errorf("the daemon exited %d after SIGTERM: %s", code, d.stderr)
	}
}

var waitLimit = testenv.Wait(30 * time.Second)

var docKey = regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|")

// undocumentedStatusKeys fails for each key of status --json's output
// that docs/daemon.md's table of them lacks.
func undocumentedStatusKeys(t *testing.T, out string) {
	t.Helper()
	doc, err := os.ReadFile("../../docs/daemon.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(doc), "`--json` prints the same")
	documented := map[string]bool{}
	for _, m := range docKey.FindAllStringSubmatch(table, -1) {
		documented[m[1]] = true
	}
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, sub := range v {
				if !documented[k] {
					t.Errorf("status --json has the key %q, which docs/daemon.md does not document", k)
				}
				walk(sub)
			}
		case []any:
			for _, sub := range v {
				walk(sub)
			}
		}
	}
	walk(v)
}

// README's Daemon section works as written, with /home/you standing for a
// HOME of the test's: its daemon.json in the place its sh block names,
// the sh block's lines in turn (prepare, the daemon, status), then each
// host configuration's connect through a Go SDK client, answered by the
// warm filesystem server.
func TestReadmeDaemonRunsAsWritten(t *testing.T) {
	frictionCase(t)
	testenv.NPMServer(t, "server-filesystem") // the npm test tier: prepare needs the registry
	cleanState(t, "npx", "-y", "@modelcontextprotocol/server-filesystem")
	home, env := daemonHome(t)
	writeTree(t, home, map[string]string{"notes/todo.txt": "in notes"})
	own(t, filepath.Join(home, "notes"), 1000)
	text, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(strings.ReplaceAll(string(text), "/home/you", home), "\n## Daemon\n")
	section, _, _ = strings.Cut(section, "\n## ")
	configs := configBlock.FindAllStringSubmatch(section, -1)
	sh := shBlock.FindStringSubmatch(section)
	if !ok || len(configs) != 2 || sh == nil {
		t.Fatalf("README's Daemon section should hold the servers file, an sh block and a host's configuration:\n%s", section)
	}
	var daemon *cliDaemon
	for _, line := range strings.Split(strings.TrimSpace(sh[1]), "\n") {
		switch {
		case strings.HasPrefix(line, "mcpsandbox daemon "):
			m := regexp.MustCompile(`--config ~/(\S+)`).FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("%s: no --config ~/FILE", line)
			}
			writeTree(t, home, map[string]string{m[1]: configs[0][1]})
			daemon = startCLIDaemon(t, home, env, line)
		case strings.HasPrefix(line, "mcpsandbox status"):
			wantIn(t, line, shell(t, home, env, line), "notes: policy filesystem")
		default:
			shell(t, home, env, line)
		}
	}
	if daemon == nil {
		t.Fatal("README's sh block starts no daemon")
	}
	for name, server := range hostServers(t, configs[1][1]) {
		if server.Command != "mcpsandbox" || len(server.Args) == 0 || server.Args[0] != "connect" {
			t.Errorf("%s: %s %v is no connect", name, server.Command, server.Args)
			continue
		}
		m, _ := mustHost(t, home, env, append([]string{"mcpsandbox"}, server.Args...)...)
		if got, isErr := m.callResult(t, "read_text_file", map[string]any{"path": filepath.Join(home, "notes", "todo.txt")}); isErr || got != "in notes" {
			t.Errorf("read_text_file through connect %s: %q (error %v)", name, got, isErr)
		}
		m.close(t)
	}
	// The pool's refill, as `logs -f` shows it coming.
	follow(t, home, env, "mcpsandbox logs notes -f", `msg="mcpsandbox daemon: instance warm" server=notes instance=notes#2`)
	wantIn(t, "status", shell(t, home, env, "mcpsandbox status"), "notes#2", "warm")
	daemon.stop(t)
}

// follow runs line (a logs -f) until it prints a line holding want.
func follow(t *testing.T, dir string, env []string, line, want string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", "exec "+line)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	found := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), want) {
				found <- true
				return
			}
		}
		found <- false
	}()
	select {
	case ok := <-found:
		if !ok {
			t.Fatalf("%s ended without %q", line, want)
		}
	case <-time.After(waitLimit):
		t.Fatalf("%s did not show %q", line, want)
	}
}

// The daemon's commands refuse wrong command lines with status 2, naming
// the fix.
func TestDaemonCommandLinesExit2NamingTheFix(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"daemon"}, "give the servers to keep with --config FILE"},
		{[]string{"daemon", "--config", "f", "extra"}, `unexpected argument "extra"`},
		{[]string{"daemon", "--config", "f", "--log-level", "loud"}, "use debug, info, warn or error"},
		{[]string{"connect"}, "give the server's name"},
		{[]string{"connect", "a", "b"}, `unexpected argument "b": give one server name`},
		{[]string{"connect", "a", "--system", "--socket-dir", "/x"}, "give --socket-dir or --system, not both"},
		{[]string{"connect", "--sytem", "a"}, "did you mean --system?"},
		{[]string{"logs"}, "give the server's name"},
		{[]string{"restart"}, "give the server's name"},
		{[]string{"status", "x"}, `unexpected argument "x"`},
		{[]string{"reload", "x"}, `unexpected argument "x"`},
	} {
		_, stderr, code := runCLI(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "mcpsandbox help "+c.args[0]) {
			t.Errorf("mcpsandbox %s: exit %d, stderr %q; want 2 and %q", strings.Join(c.args, " "), code, stderr, c.want)
		}
	}
}

// A config that does not load stops the daemon at once with status 2 and
// the error at file:line:col; control commands with no daemon exit 1
// saying how to start one.
func TestDaemonRefusesABadConfig(t *testing.T) {
	home, env := daemonHome(t)
	writeTree(t, home, map[string]string{"servers.json": `{"mcpServers": {"x": {"comand": "srv"}}}`})
	cmd := exec.Command(self(t), asCLI, "daemon", "--config", "servers.json", "--socket-dir", filepath.Join(home, "sock"), "--log-file", filepath.Join(home, "log"))
	cmd.Dir, cmd.Env = home, env
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != exitUsage || !strings.Contains(string(out), `servers.json:1:23: unknown key "comand" in server "x": did you mean command?`) {
		t.Errorf("daemon with a bad config: exit %d (%v), output %q", code, err, out)
	}
	for _, args := range [][]string{{"status"}, {"reload"}, {"restart", "x"}, {"logs", "x"}} {
		_, stderr, code := runCLI(t, append(args, "--socket-dir", filepath.Join(home, "sock"))...)
		if code != exitFailure || !strings.Contains(stderr, "no mcpsandbox daemon is running") || !strings.Contains(stderr, "mcpsandbox daemon --config FILE") {
			t.Errorf("%v with no daemon: exit %d, stderr %q", args, code, stderr)
		}
	}
}
