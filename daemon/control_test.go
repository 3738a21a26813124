package daemon_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/daemon"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// restart NAME restarts each instance as after a crash: the host's
// session carries on with a new process, its next call answered.
func TestRestartIsInvisibleToTheHost(t *testing.T) {
	requireConfinement(t)
	d := startDaemon(t, configOf(tokenEntry(t, "svc", "")))
	for _, version := range []string{"2025-11-25", ""} { // classic and stateless sessions
		c := d.connect("svc", version)
		before := c.call(t, "token", nil)
		pid := d.instance(c.instance).Pid
		a := d.control(daemon.Hello{Control: daemon.ControlRestart, Server: "svc"})
		if !a.OK || len(a.Restarted) != 1 || a.Restarted[0] != c.instance {
			t.Fatalf("restart: %+v", a)
		}
		after := c.call(t, "token", nil)
		if after == before {
			t.Errorf("%q session: still answered by the process before the restart", version)
		}
		if i := d.instance(c.instance); i.Restarts != 1 || i.Generation != 2 || i.Pid == pid || !strings.Contains(i.LastExit, "restart requested by uid") {
			t.Errorf("%q session: status after the restart: %+v", version, i)
		}
		c.Close()
	}
	if a := d.control(daemon.Hello{Control: daemon.ControlRestart, Server: "nosuch"}); a.OK || a.Error.Kind != daemon.RefusedNoServer {
		t.Errorf("restart of a server the config lacks: %+v", a)
	}
}

// With no daemon, connect's stand-in answers every request of the host
// with "server unavailable", saying how to start one, in both session
// styles, until the host leaves; notifications get no answer.
func TestConnectWithoutADaemon(t *testing.T) {
	socket := filepath.Join(t.TempDir(), daemon.SocketName)
	_, refusal := daemon.ConnectTo([]string{socket}, "notes")
	if refusal == nil || refusal.Code != supervisor.CodeServerUnavailable {
		t.Fatalf("refusal %+v", refusal)
	}
	for _, want := range []string{"no mcpsandbox daemon is running", socket, "mcpsandbox daemon --config FILE", `"notes"`} {
		if !strings.Contains(refusal.Reason, want) {
			t.Errorf("reason %q does not say %q", refusal.Reason, want)
		}
	}
	for _, version := range []string{"2025-11-25", ""} {
		hostIn, toStandIn := io.Pipe()
		fromStandIn, hostOut := io.Pipe()
		ended := make(chan error, 1)
		go func() {
			ended <- daemon.Unavailable(hostIn, hostOut, refusal)
			hostOut.Close()
		}()
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		var so *mcp.ClientSessionOptions
		if version != "" {
			so = &mcp.ClientSessionOptions{ProtocolVersion: version}
		}
		_, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: fromStandIn, Writer: toStandIn}, so)
		cancel()
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != supervisor.CodeServerUnavailable || rpcErr.Message != "server unavailable" {
			t.Fatalf("%q session: initialize got %v, want the error %d", version, err, supervisor.CodeServerUnavailable)
		}
		var data struct{ Reason, Kind string }
		json.Unmarshal(rpcErr.Data, &data)
		if data.Reason != refusal.Reason || data.Kind != "server-unavailable" {
			t.Errorf("%q session: error data %s", version, rpcErr.Data)
		}
		toStandIn.Close()
		select {
		case err := <-ended:
			if err != nil {
				t.Errorf("stand-in: %v", err)
			}
		case <-time.After(waitLimit):
			t.Fatal("the stand-in did not end when the host left")
		}
	}

	// Raw lines: a request, a notification, a batch, not JSON.
	var out strings.Builder
	in := strings.NewReader(`{"jsonrpc":"2.0","id":"a","method":"tools/list"}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"x"},{"jsonrpc":"2.0","id":2,"method":"ping"}]` + "\n" +
		"not json\n")
	if err := daemon.Unavailable(in, &out, refusal); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"id":"a","error":{"code":-31111`) ||
		!strings.HasPrefix(lines[1], `[{"jsonrpc":"2.0","id":1,"error"`) || !strings.Contains(lines[1], `{"jsonrpc":"2.0","id":2,"error"`) ||
		!strings.Contains(lines[2], `"id":null,"error":{"code":-32700`) {
		t.Errorf("answers:\n%s", out.String())
	}
}

// logs NAME gives the server's last records, each with its instance; -f
// streams new ones until the client leaves.
func TestLogsShowAServersRecords(t *testing.T) {
	requireConfinement(t)
	d := startDaemon(t, configOf(tokenEntry(t, "a", ""), tokenEntry(t, "b", "")))
	ca := d.connect("a", "")
	token := ca.call(t, "token", nil)
	d.connect("b", "").call(t, "token", nil)

	c, a, err := daemon.Dial(d.socket, daemon.Hello{Control: daemon.ControlLogs, Server: "a", Follow: true})
	if err != nil || !a.OK {
		t.Fatalf("logs: %v %+v", err, a.Error)
	}
	r := bufio.NewReader(c)
	seen := ""
	for !strings.Contains(seen, "token server started: "+token) {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("logs ended before the token's line: %v\n%s", err, seen)
		}
		if !strings.Contains(line, "server=a") || strings.Contains(line, "server=b") {
			t.Errorf("a record not of a: %s", line)
		}
		seen += line
	}
	if !strings.Contains(seen, "instance=a#1") {
		t.Errorf("records without their instance:\n%s", seen)
	}
	// The call's audit line, though the policy names no audit log.
	ca.call(t, "echo", map[string]any{"text": "audited"})
	for !strings.Contains(seen, `"tool":"echo"`) {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("following ended before the audit line: %v\n%s", err, seen)
		}
		if strings.Contains(line, `"tool":"echo"`) && !strings.HasPrefix(line, "audit instance=a#1 {") {
			t.Errorf("audit line %q", line)
		}
		seen += line
	}
	// Following: a restart's records arrive.
	d.control(daemon.Hello{Control: daemon.ControlRestart, Server: "a"})
	for !strings.Contains(seen, `msg="server restarted; the host's session continues"`) {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("following ended before the restart: %v\n%s", err, seen)
		}
		seen += line
	}
	c.Close()
	if a := d.control(daemon.Hello{Control: daemon.ControlLogs, Server: "nosuch"}); a.OK || a.Error.Kind != daemon.RefusedNoServer {
		t.Errorf("logs of a server the config lacks: %+v", a)
	}
}

// A second daemon in the same directory refuses to start, naming the
// first's pid; a socket a dead daemon left is replaced.
func TestOneDaemonPerSocketDirectory(t *testing.T) {
	d := startDaemon(t, configOf(tokenEntry(t, "x", "")))
	second := &testDaemon{t: t, config: d.config, logs: &syncBuffer{}, done: make(chan error, 1)}
	err := second.run(filepath.Dir(d.socket))
	var running *daemon.RunningError
	if !errors.As(err, &running) || !strings.Contains(err.Error(), "already running") || running.Pid != itoa(os.Getpid()) {
		t.Errorf("a second daemon: %v", err)
	}
	if st := d.status(); st.Pid != os.Getpid() {
		t.Errorf("the first daemon after the second's attempt: %+v", st)
	}
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket is still there after shutdown: %v", err)
	}

	// A dead daemon's socket: bound, nobody listening.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: d.socket, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	third := &testDaemon{t: t, config: d.config, logs: &syncBuffer{}, done: make(chan error, 1)}
	if err := third.run(filepath.Dir(d.socket)); err != nil {
		t.Fatalf("a daemon over a stale socket: %v", err)
	}
	if st := third.status(); st.Socket != d.socket {
		t.Errorf("status of the daemon over the stale socket: %+v", st)
	}
}

// At shutdown every client's session ends with its requests answered and
// Run returns.
func TestShutdownEndsEverySession(t *testing.T) {
	requireConfinement(t)
	d := startDaemon(t, configOf(tokenEntry(t, "s", `, "prestart": 1`)))
	c := d.connect("s", "")
	c.call(t, "token", nil)
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, c)
	d.logs.waitForCount(t, `msg="mcpsandbox daemon: stopped"`, 1)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
