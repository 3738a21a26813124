package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/daemon"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// The daemon as systemd runs it, in the guest tier: the user's own service
// in their login session, and root's system service that other users reach.
// Each time a host's `mcpsandbox connect` gets a session, status shows its
// instance, a crash of the server is restarted behind the host's back, the
// daemon's records are in the journal by server and instance, and
// `systemctl stop` leaves nothing behind.

// daemonWait bounds each wait on the daemon, its instances and systemd.
var daemonWait = testenv.Wait(30 * time.Second)

// exampleName is the server the tests' configs name.
const exampleName = "example"

// TestDaemonSystemdUserService: `systemd-run --user -p Delegate=yes` (what
// a unit in ~/.config/systemd/user with Delegate=yes is), from the user's
// login session, with a host that passes only what TypeScript-SDK hosts
// pass (no XDG_RUNTIME_DIR: connect finds the socket all the same).
func TestDaemonSystemdUserService(t *testing.T) {
	requireGuest(t)
	if os.Geteuid() == 0 {
		t.Skip("a user's service: runs in the guest tier's user phase")
	}
	runtimeDir := os.Getenv("XDG_RUNTIME_DIR")
	if runtimeDir == "" {
		t.Fatal("XDG_RUNTIME_DIR is not set: the user phase runs in a login session, which pam_systemd gives one")
	}
	d := startDaemonService(t, true, writeDaemonConfig(t, ""))
	if want := filepath.Join(runtimeDir, "mcpsandbox", daemon.SocketName); d.socket != want {
		t.Errorf("the user's daemon listens on %s, want %s", d.socket, want)
	}
	checkMode(t, filepath.Dir(d.socket), 0o700)

	host := connectDaemon(t, nil, hostEnv(), "2025-11-25")
	host.echo(t, "through the user's daemon")
	st := daemonStatus(t, os.Environ())
	inst := instanceOf(t, st, host)
	checkRunning(t, inst, os.Getuid())
	checkStatusTable(t, os.Environ(), inst)

	crashAndRestart(t, host, inst)
	checkJournal(t, d, inst)
	stopService(t, d, host)
}

// TestDaemonSystemdSystemService: root's daemon as a system service
// (`systemd-run -p Delegate=yes`), its socket in /run/mcpsandbox, which the
// config's users let the guest's user reach: root and that user connect, a
// uid the config does not name is refused and told why.
func TestDaemonSystemdSystemService(t *testing.T) {
	requireGuest(t)
	if os.Geteuid() != 0 {
		t.Skip("a system service: runs in the guest tier's root phase")
	}
	guestUser, err := user.Lookup("user")
	if err != nil {
		t.Fatalf("the guest's user: %v", err)
	}
	uid, _ := strconv.Atoi(guestUser.Uid)
	gid, _ := strconv.Atoi(guestUser.Gid)
	d := startDaemonService(t, false, writeDaemonConfig(t, `, "users": ["user"]`))
	if want := filepath.Join(daemon.SystemSocketDir, daemon.SocketName); d.socket != want {
		t.Errorf("the system daemon listens on %s, want %s", d.socket, want)
	}
	checkMode(t, filepath.Dir(d.socket), 0o755)
	checkMode(t, d.socket, 0o666)

	rootHost := connectDaemon(t, nil, hostEnv(), "") // the Go SDK's default: a stateless session
	rootHost.echo(t, "root's host")
	userHost := connectDaemon(t, &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, userHostEnv(guestUser), "2025-11-25")
	userHost.echo(t, "the user's host")
	st := daemonStatus(t, os.Environ())
	checkRunning(t, instanceOf(t, st, rootHost), 0)
	inst := instanceOf(t, st, userHost)
	checkRunning(t, inst, uid)
	checkStatusTable(t, os.Environ(), inst)

	refusedPeer(t, 4242)
	crashAndRestart(t, userHost, inst)
	rootHost.echo(t, "root's host, after the other instance's crash")
	checkJournal(t, d, inst)
	checkJournalRefusal(t, d, 4242)
	rootHost.cs.Close()
	stopService(t, d, userHost)
}

// writeDaemonConfig writes a Claude Desktop style config of the example
// server (this test binary in its role), confined by the policy its
// command selects; keys go into its entry. Readable by the daemon's user
// only, as a user's own files are.
func writeDaemonConfig(t *testing.T, keys string) string {
	t.Helper()
	config := filepath.Join(t.TempDir(), "servers.json")
	entry := fmt.Sprintf(`{"mcpServers": {%q: {"command": %q, "args": [%q]%s}}}`, exampleName, self(t), asExampleServer, keys)
	if err := os.WriteFile(config, []byte(entry+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return config
}

// daemonService is a daemon systemd runs as a transient service.
type daemonService struct {
	unit   string
	user   bool   // the user's manager's, else the system's
	socket string // where it listens (from its status)
	pid    int    // its main process
	cgroup string // the service's cgroup, under /sys/fs/cgroup
}

// startDaemonService starts `mcpsandbox daemon --config config` as a
// service with Delegate=yes (the daemon makes its instances' cgroups in
// it) and Type=notify, so that systemd-run returns once the daemon has
// said it listens.
func startDaemonService(t *testing.T, userManager bool, config string) *daemonService {
	t.Helper()
	kind := "system"
	if userManager {
		kind = "user"
	}
	d := &daemonService{unit: fmt.Sprintf("mcpsandbox-daemon-test-%s-%d.service", kind, os.Getpid()), user: userManager}
	args := []string{"--unit=" + d.unit, "--quiet", "-p", "Delegate=yes", "-p", "Type=notify",
		"--", self(t), asCLI, "daemon", "--config", config}
	if userManager {
		args = append([]string{"--user"}, args...)
	}
	if out, err := exec.Command("systemd-run", args...).CombinedOutput(); err != nil {
		t.Fatalf("systemd-run %s: %v\n%s\njournal:\n%s", strings.Join(args, " "), err, out, d.journalText())
	}
	t.Cleanup(func() { // (errors: the unit is gone already)
		d.systemctl("stop", d.unit)
		d.systemctl("reset-failed", d.unit)
	})
	d.settle(t, testCLI(t))
	return d
}

// settle learns the started service's main process and cgroup from
// systemd and its socket from the daemon's status, through cli.
func (d *daemonService) settle(t *testing.T, cli []string) {
	t.Helper()
	d.pid, _ = strconv.Atoi(d.show(t, "MainPID"))
	d.cgroup = filepath.Join("/sys/fs/cgroup", d.show(t, "ControlGroup"))
	if d.pid == 0 || d.cgroup == "/sys/fs/cgroup" {
		t.Fatalf("%s runs no process (MainPID %d, ControlGroup %s)\njournal:\n%s", d.unit, d.pid, d.cgroup, d.journalText())
	}
	d.socket = daemonStatusWith(t, cli, os.Environ()).Socket
	t.Logf("%s: daemon pid %d in %s, listening on %s", d.unit, d.pid, d.cgroup, d.socket)
}

// systemctl runs systemctl on the daemon's manager.
func (d *daemonService) systemctl(args ...string) (string, error) {
	if d.user {
		args = append([]string{"--user"}, args...)
	}
	out, err := exec.Command("systemctl", args...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// show is one property of the daemon's unit.
func (d *daemonService) show(t *testing.T, prop string) string {
	t.Helper()
	out, err := d.systemctl("show", "--value", "-p", prop, d.unit)
	if err != nil {
		t.Fatalf("systemctl show %s: %v: %s", d.unit, err, out)
	}
	return out
}

// hostClient is a host's session through `mcpsandbox connect`.
type hostClient struct {
	cs     *mcp.ClientSession
	cmd    *exec.Cmd
	stderr *testenv.LogCapture
}

// testCLI is this test binary as mcpsandbox; the package's tests pass the
// installed binary instead.
func testCLI(t *testing.T) []string { return []string{self(t), asCLI} }

// dialDaemonWith starts `CLI connect example` as a host starts a server
// (mcp.CommandTransport, env only), as the user cred names (nil: this
// test's), and initializes a session of version ("": the SDK's choice).
func dialDaemonWith(t *testing.T, cli []string, cred *syscall.Credential, env []string, version string) (*hostClient, error) {
	t.Helper()
	h := &hostClient{cmd: exec.Command(cli[0], append(cli[1:], "connect", exampleName)...), stderr: testenv.NewLogCapture(t)}
	h.cmd.Env, h.cmd.Stderr, h.cmd.Dir = env, h.stderr, "/"
	if cred != nil {
		h.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	ctx, cancel := context.WithTimeout(t.Context(), daemonWait)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "systemd-host", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: h.cmd}, opts)
	if err != nil {
		return h, err
	}
	h.cs = cs
	t.Cleanup(func() { cs.Close() })
	return h, nil
}

func connectDaemon(t *testing.T, cred *syscall.Credential, env []string, version string) *hostClient {
	t.Helper()
	return connectDaemonWith(t, testCLI(t), cred, env, version)
}

// connectDaemonWith is connectDaemon with cli as mcpsandbox.
func connectDaemonWith(t *testing.T, cli []string, cred *syscall.Credential, env []string, version string) *hostClient {
	t.Helper()
	h, err := dialDaemonWith(t, cli, cred, env, version)
	if err != nil {
		t.Fatalf("mcpsandbox connect %s: initialize: %v\nconnect's stderr:\n%s", exampleName, err, h.stderr)
	}
	return h
}

// call calls a tool of the example server and returns its text.
func (h *hostClient) call(t *testing.T, tool string, args map[string]any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), daemonWait)
	defer cancel()
	res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v\nconnect's stderr:\n%s", tool, err, h.stderr)
	}
	if res.IsError || len(res.Content) == 0 {
		t.Fatalf("%s: error result %+v", tool, res)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

func (h *hostClient) echo(t *testing.T, text string) {
	t.Helper()
	if got := h.call(t, "echo", map[string]any{"text": text}); got != text {
		t.Fatalf("echo %q answered %q", text, got)
	}
}

// userHostEnv is what a TypeScript-SDK host of u passes.
func userHostEnv(u *user.User) []string {
	return []string{"HOME=" + u.HomeDir, "LOGNAME=" + u.Username, "PATH=" + os.Getenv("PATH"),
		"SHELL=/bin/bash", "TERM=" + os.Getenv("TERM"), "USER=" + u.Username}
}

// daemonStatus runs `mcpsandbox status --json` with env, as its user runs
// it from a shell.
func daemonStatus(t *testing.T, env []string) *daemon.Status {
	t.Helper()
	return daemonStatusWith(t, testCLI(t), env)
}

func daemonStatusWith(t *testing.T, cli []string, env []string) *daemon.Status {
	t.Helper()
	cmd := exec.Command(cli[0], append(cli[1:], "status", "--json")...)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mcpsandbox status --json: %v\n%s%s", err, out, stderrOf(err))
	}
	var st daemon.Status
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("mcpsandbox status --json: %v\n%s", err, out)
	}
	return &st
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}

// instanceOf is the instance status shows for h's connect process.
func instanceOf(t *testing.T, st *daemon.Status, h *hostClient) daemon.InstanceStatus {
	t.Helper()
	for _, s := range st.Servers {
		for _, i := range s.Instances {
			if s.Name == exampleName && i.ClientPid != nil && *i.ClientPid == h.cmd.Process.Pid {
				return i
			}
		}
	}
	t.Fatalf("status shows no instance of %s for the connect process %d: %+v", exampleName, h.cmd.Process.Pid, st.Servers)
	return daemon.InstanceStatus{}
}

func checkRunning(t *testing.T, i daemon.InstanceStatus, uid int) {
	t.Helper()
	if i.State != "running" || i.Pid <= 0 || i.Generation != 1 || i.Restarts != 0 || i.ClientUID == nil || *i.ClientUID != uid {
		t.Errorf("status of %s: state %q, pid %d, generation %d, restarts %d, client uid %v; want running, a pid, 1, 0 and %d",
			i.ID, i.State, i.Pid, i.Generation, i.Restarts, i.ClientUID, uid)
	}
	if i.Pids == 0 || i.Memory == 0 {
		t.Errorf("status of %s: pids %d, memory %d bytes; want its cgroup's counts", i.ID, i.Pids, i.Memory)
	}
}

// checkStatusTable: the readable status has a row for the instance.
func checkStatusTable(t *testing.T, env []string, i daemon.InstanceStatus) {
	t.Helper()
	cmd := exec.Command(self(t), asCLI, "status")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mcpsandbox status: %v\n%s%s", err, out, stderrOf(err))
	}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == i.ID {
			if f[1] != "running" || f[2] != strconv.Itoa(i.Pid) {
				t.Errorf("mcpsandbox status: row %q, want %s running with pid %d", line, i.ID, i.Pid)
			}
			return
		}
	}
	t.Errorf("mcpsandbox status shows no row for %s:\n%s", i.ID, out)
}

// crashAndRestart kills the instance's server process behind the host's
// back: the host's next call is answered, by a new process, in the same
// session, and status counts the restart.
func crashAndRestart(t *testing.T, h *hostClient, inst daemon.InstanceStatus) {
	t.Helper()
	crashAndRestartWith(t, testCLI(t), h, inst)
}

func crashAndRestartWith(t *testing.T, cli []string, h *hostClient, inst daemon.InstanceStatus) {
	t.Helper()
	before := h.call(t, "instance", nil)
	if err := syscall.Kill(inst.Pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill %d (%s's server): %v", inst.Pid, inst.ID, err)
	}
	// A request sent before the daemon sees the crash would be in flight
	// in it, and answered "crashed, retry" as under run: the host waits
	// until status shows the restart under way, as an idle host would.
	deadline := time.Now().Add(daemonWait)
	for {
		now := instanceOf(t, daemonStatusWith(t, cli, os.Environ()), h)
		if now.Restarts > 0 || now.State == "restarting" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status does not show %s restarting after its server was killed: %+v", inst.ID, now)
		}
		time.Sleep(20 * time.Millisecond) // polling status, as a user would
	}
	after := h.call(t, "instance", nil)
	if after == before {
		t.Errorf("after the kill of pid %d the same server process (%s) answered", inst.Pid, after)
	}
	h.echo(t, "after the restart")
	st := daemonStatusWith(t, cli, os.Environ())
	now := instanceOf(t, st, h)
	if now.ID != inst.ID || now.State != "running" || now.Restarts != 1 || now.Generation != 2 || now.Pid == inst.Pid || now.Pid <= 0 {
		t.Errorf("status after the crash: %s state %q, restarts %d, generation %d, pid %d; want %s running, 1, 2 and a new pid (not %d)",
			now.ID, now.State, now.Restarts, now.Generation, now.Pid, inst.ID, inst.Pid)
	}
	if !strings.Contains(now.LastExit, "killed") {
		t.Errorf("status after the crash: last exit %q, want the kill", now.LastExit)
	}
}

// refusedPeer connects as a uid the config does not allow: the host gets
// "server unavailable" saying which uid, which server and which key.
func refusedPeer(t *testing.T, uid int) {
	t.Helper()
	refusedPeerWith(t, testCLI(t), uid)
}

func refusedPeerWith(t *testing.T, cli []string, uid int) {
	t.Helper()
	h, err := dialDaemonWith(t, cli, &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)},
		[]string{"HOME=/nonexistent", "PATH=" + os.Getenv("PATH"), "USER=nobody", "LOGNAME=nobody"}, "2025-11-25")
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != supervisor.CodeServerUnavailable {
		t.Fatalf("uid %d: initialize got %v, want the error %d (server unavailable)", uid, err, supervisor.CodeServerUnavailable)
	}
	var data struct{ Reason, Kind string }
	json.Unmarshal(rpcErr.Data, &data)
	for _, want := range []string{fmt.Sprintf("uid %d may not use server %q", uid, exampleName), "user", "users"} {
		if !strings.Contains(data.Reason, want) {
			t.Errorf("uid %d: reason %q does not say %q", uid, data.Reason, want)
		}
	}
	if !h.stderr.Contains(data.Reason) {
		t.Errorf("uid %d: connect's stderr does not give the reason:\n%s", uid, h.stderr)
	}
}

// journalRecords are the journal's records of the daemon's unit, oldest
// first; matches narrow them (FIELD=VALUE). The guest's journal is
// volatile, kept in one file only root and the journal's groups read (a
// persistent one gives each user a file of their own), so a user reads it
// through sudo, matching the user unit's field (journalctl --user-unit
// would match root's uid under sudo).
func (d *daemonService) journalRecords(t *testing.T, matches ...string) []map[string]string {
	t.Helper()
	recs, err := d.readJournal(matches...)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func (d *daemonService) readJournal(matches ...string) ([]map[string]string, error) {
	var sync, query []string
	if d.user {
		sync = []string{"sudo", "-n", "journalctl", "--sync"}
		query = append([]string{"sudo", "-n", "journalctl", "_SYSTEMD_USER_UNIT=" + d.unit, "_UID=" + strconv.Itoa(os.Getuid())}, matches...)
	} else {
		sync = []string{"journalctl", "--sync"}
		query = append([]string{"journalctl", "-u", d.unit}, matches...)
	}
	// A record written before --sync is in the journal when it returns.
	if out, err := exec.Command(sync[0], sync[1:]...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s: %v: %s", strings.Join(sync, " "), err, out)
	}
	query = append(query, "-o", "json", "--no-pager")
	out, err := exec.Command(query[0], query[1:]...).Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %v%s", strings.Join(query, " "), err, stderrOf(err))
	}
	var recs []map[string]string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		var raw map[string]any
		if err := json.Unmarshal([]byte(line), &raw); err != nil {
			return nil, fmt.Errorf("journalctl -o json: %v: %s", err, line)
		}
		rec := map[string]string{}
		for k, v := range raw {
			if s, ok := v.(string); ok { // (binary or repeated fields are arrays)
				rec[k] = s
			}
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

// journalText is the unit's journal as text, for failure messages.
func (d *daemonService) journalText() string {
	recs, err := d.readJournal()
	if err != nil {
		return err.Error()
	}
	return recordsText(recs)
}

func fieldsText(r map[string]string) string {
	var s string
	for _, k := range []string{"SERVER", "INSTANCE", "ERROR", "REASON", "WHY"} {
		if v, ok := r[k]; ok {
			s += " " + k + "=" + v
		}
	}
	return s
}

// checkJournal: the daemon's records of the server are in the journal, as
// the unit's, with SERVER and INSTANCE fields: the client attached to the
// instance and the restart after the crash.
func checkJournal(t *testing.T, d *daemonService, inst daemon.InstanceStatus) {
	t.Helper()
	recs := d.journalRecords(t, "SERVER="+exampleName)
	unitField := "_SYSTEMD_UNIT"
	if d.user {
		unitField = "_SYSTEMD_USER_UNIT"
	}
	seen := map[string]bool{}
	for _, r := range recs {
		if r["SERVER"] != exampleName || r[unitField] != d.unit || r["SYSLOG_IDENTIFIER"] != "mcpsandbox" {
			t.Errorf("journal record with SERVER=%s %s=%s SYSLOG_IDENTIFIER=%s; want %s, %s and mcpsandbox: %v",
				r["SERVER"], unitField, r[unitField], r["SYSLOG_IDENTIFIER"], exampleName, d.unit, r)
		}
		if r["INSTANCE"] == inst.ID {
			seen[r["MESSAGE"]] = true
		}
	}
	for _, want := range []string{"mcpsandbox daemon: client attached", "server started", "server restarted; the host's session continues"} {
		if !seen[want] {
			t.Errorf("no journal record %q with SERVER=%s INSTANCE=%s; the server's records:\n%s", want, exampleName, inst.ID, recordsText(recs))
		}
	}
}

// checkJournalRefusal: the refusal of uid is in the journal too.
func checkJournalRefusal(t *testing.T, d *daemonService, uid int) {
	t.Helper()
	recs := d.journalRecords(t, "SERVER="+exampleName, "UID="+strconv.Itoa(uid))
	for _, r := range recs {
		if r["MESSAGE"] == "mcpsandbox daemon: client refused" && strings.Contains(r["WHY"], "may not use server") {
			return
		}
	}
	t.Errorf("no journal record of uid %d refused; its records:\n%s", uid, recordsText(recs))
}

func recordsText(recs []map[string]string) string {
	var lines []string
	for _, r := range recs {
		lines = append(lines, "  "+r["MESSAGE"]+fieldsText(r))
	}
	return strings.Join(lines, "\n")
}

// stopService stops the daemon's unit with a host still attached: the
// daemon shuts down in good order (the host's session ends, the socket
// goes, the unit does not fail), and no process of it, nor its cgroup,
// is left.
func stopService(t *testing.T, d *daemonService, h *hostClient) {
	t.Helper()
	stopWith(t, d, h, "systemctl stop", func() (string, error) { return d.systemctl("stop", d.unit) })
	if state, result := d.show(t, "ActiveState"), d.show(t, "Result"); state == "failed" || result != "success" {
		t.Errorf("%s after stop: state %s, result %s; want it stopped in good order", d.unit, state, result)
	}
	var stopped bool
	for _, r := range d.journalRecords(t) {
		if r["MESSAGE"] == "mcpsandbox daemon: stopped" && r["_PID"] == strconv.Itoa(d.pid) {
			stopped = true
		}
	}
	if !stopped {
		t.Errorf("no journal record of the daemon (pid %d) having stopped; the unit's journal:\n%s", d.pid, d.journalText())
	}
}

// stopWith stops d with stop (the command what) while h has a session
// through it: the session ends, the socket goes, and none of the
// service's processes or cgroups is left.
func stopWith(t *testing.T, d *daemonService, h *hostClient, what string, stop func() (string, error)) {
	t.Helper()
	pids := cgroupTreePids(t, d.cgroup)
	if len(pids) < 2 {
		t.Fatalf("the service's cgroup %s holds pids %v; want the daemon's and its instance's", d.cgroup, pids)
	}
	if out, err := stop(); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, out)
	}
	ended := make(chan error, 1)
	go func() { ended <- h.cs.Wait() }()
	select {
	case <-ended:
	case <-time.After(daemonWait):
		t.Errorf("the host's session did not end on %s; connect's stderr:\n%s", what, h.stderr)
	}
	if _, err := os.Stat(d.socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket %s is still there after %s (stat: %v)", d.socket, what, err)
	}
	waitCleanedUp(t, what, d.cgroup, pids)
}

// cgroupTreePids are the processes in the cgroup at dir and beneath it.
func cgroupTreePids(t *testing.T, dir string) []int {
	t.Helper()
	var pids []int
	err := filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
		if err != nil || !e.IsDir() {
			return err
		}
		b, err := os.ReadFile(filepath.Join(path, "cgroup.procs"))
		if err != nil {
			return err
		}
		for _, f := range strings.Fields(string(b)) {
			pid, _ := strconv.Atoi(f)
			pids = append(pids, pid)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading the processes of %s: %v", dir, err)
	}
	return pids
}

// alive are those of pids that still exist (a zombie counts: not reaped).
func alive(pids []int) []int {
	var left []int
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
			left = append(left, pid)
		}
	}
	return left
}

func checkMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != want {
		t.Errorf("%s has mode %04o, want %04o", path, fi.Mode().Perm(), want)
	}
}

// waitCleanedUp waits until the unit's cgroup and every process in pids
// are gone after what stopped it.
func waitCleanedUp(t *testing.T, what, cgroup string, pids []int) {
	t.Helper()
	deadline := time.Now().Add(daemonWait)
	for {
		_, err := os.Stat(cgroup)
		left := alive(pids)
		if errors.Is(err, os.ErrNotExist) && len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: cgroup %s (stat %v), processes still running %v", what, cgroup, err, left)
		}
		time.Sleep(50 * time.Millisecond) // polling systemd's and the kernel's clean-up
	}
}
