package daemon_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/daemon"
	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/launch"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
)

// waitLimit bounds every wait in these tests; nothing waits by sleeping.
var waitLimit = testenv.Wait(20 * time.Second)

// requireConfinement skips a test of confined instances under -short when
// this user cannot confine here.
func requireConfinement(t testing.TB) {
	t.Helper()
	testenv.RequireConfinement(t, func() error { return sandbox.Doctor().Problem(field.Plain) })
}

// testPolicy is what each test entry adds to its built-in: no heartbeat,
// quick restarts and shutdown.
const testPolicy = `"policy": {"health": {"ping-interval": "0s"}, "restart": {"backoff": "5ms..50ms", "grace": "300ms"}}`

// tokenEntry is a config entry of the token server named name; extra
// adds keys (", \"prestart\": 1").
func tokenEntry(t testing.TB, name, extra string) string {
	t.Helper()
	return entryWith(t, name, testPolicy+extra)
}

// entryWith is a config entry of the token server with keys.
func entryWith(t testing.TB, name, keys string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`%q: {"command": %q, "args": [%q], %s}`, name, exe, roleTokenServer, keys)
}

// configOf is a Claude Desktop style config of the entries.
func configOf(entries ...string) string {
	return "{\"mcpServers\": {\n" + strings.Join(entries, ",\n") + "\n}}\n"
}

// testDaemon is daemon.Run in-process, on a socket of its own.
type testDaemon struct {
	t      *testing.T
	config string // the config file
	socket string
	logs   *syncBuffer
	reload chan struct{}
	cancel context.CancelFunc
	done   chan error
}

// startDaemon writes config and runs a daemon on it, once it listens.
// Its directories are any user's to enter, as another uid's client needs.
func startDaemon(t *testing.T, config string) *testDaemon {
	t.Helper()
	d, err := tryDaemon(t, config)
	if err != nil {
		t.Fatalf("daemon.Run: %v", err)
	}
	return d
}

// tryDaemon is startDaemon, returning Run's error at start.
func tryDaemon(t *testing.T, config string) (*testDaemon, error) {
	t.Helper()
	dir := testenv.SharedDir(t, "mcpsandbox-daemon-")
	d := &testDaemon{t: t, config: filepath.Join(dir, "servers.json"), logs: &syncBuffer{}, reload: make(chan struct{}), done: make(chan error, 1)}
	d.write(config)
	return d, d.run(filepath.Join(dir, "sock"))
}

func (d *testDaemon) run(sockDir string) error {
	d.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d.cancel = cancel
	ready := make(chan string, 1)
	go func() {
		d.done <- daemon.Run(ctx, daemon.Options{
			Config:    d.config,
			SocketDir: sockDir,
			Log:       slog.NewTextHandler(d.logs, &slog.HandlerOptions{Level: slog.LevelDebug}),
			LookupEnv: os.LookupEnv,
			Environ:   os.Environ(),
			Host:      launch.FromProcess(),
			Reload:    d.reload,
			Ready:     func(socket string) { ready <- socket },
		})
	}()
	select {
	case d.socket = <-ready:
	case err := <-d.done:
		cancel()
		return err
	case <-time.After(waitLimit):
		d.t.Fatal("the daemon did not listen in time")
	}
	d.t.Cleanup(func() {
		d.stop()
		if d.t.Failed() {
			d.t.Logf("daemon log:\n%s", d.logs)
		}
	})
	return nil
}

// stop shuts the daemon down and waits for Run to return.
func (d *testDaemon) stop() error {
	d.t.Helper()
	d.cancel()
	select {
	case err, ok := <-d.done:
		if ok {
			close(d.done)
		}
		return err
	case <-time.After(waitLimit):
		d.t.Fatal("the daemon did not stop in time")
	}
	return nil
}

// write replaces the config file.
func (d *testDaemon) write(config string) {
	d.t.Helper()
	if err := os.WriteFile(d.config, []byte(config), 0o644); err != nil {
		d.t.Fatal(err)
	}
}

// control sends a control hello and returns the answer.
func (d *testDaemon) control(h daemon.Hello) daemon.Answer {
	d.t.Helper()
	c, a, err := daemon.Dial(d.socket, h)
	if err != nil {
		d.t.Fatalf("%s: %v", h.Control, err)
	}
	if c != nil {
		c.Close()
	}
	return a
}

func (d *testDaemon) status() *daemon.Status {
	d.t.Helper()
	a := d.control(daemon.Hello{Control: daemon.ControlStatus})
	if !a.OK {
		d.t.Fatalf("status refused: %+v", a.Error)
	}
	return a.Status
}

// instance is the status of the instance id, or fails the test.
func (d *testDaemon) instance(id string) daemon.InstanceStatus {
	d.t.Helper()
	st := d.status()
	for _, s := range st.Servers {
		for _, i := range s.Instances {
			if i.ID == id {
				return i
			}
		}
	}
	d.t.Fatalf("no instance %s in status %+v", id, st)
	return daemon.InstanceStatus{}
}

// client is a Go SDK client's session through the daemon, as `connect`
// makes it; version "" lets the SDK choose (stateless first).
type client struct {
	*mcp.ClientSession
	instance string
	conn     *daemon.Conn
}

func (d *testDaemon) connect(name, version string) *client {
	d.t.Helper()
	c, a, err := daemon.Dial(d.socket, daemon.Hello{Connect: name})
	if err != nil {
		d.t.Fatalf("connect %s: %v", name, err)
	}
	if !a.OK {
		d.t.Fatalf("connect %s refused: %+v", name, a.Error)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	var so *mcp.ClientSessionOptions
	if version != "" {
		so = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "daemon-test", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: c, Writer: c}, so)
	if err != nil {
		d.t.Fatalf("initialize through %s: %v", a.Instance, err)
	}
	cl := &client{ClientSession: cs, instance: a.Instance, conn: c}
	d.t.Cleanup(func() { cs.Close() })
	return cl
}

// call calls a tool and returns its text, failing on any error.
func (c *client) call(t testing.TB, tool string, args map[string]any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: tools/call %s: %v", c.instance, tool, err)
	}
	if res.IsError || len(res.Content) == 0 {
		t.Fatalf("%s: tools/call %s: %+v", c.instance, tool, res)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

var tokenLine = regexp.MustCompile(`instance=(\S+) .*line="token server started: ([0-9a-f]+)"`)

// tokenOf waits until instance id's process logged its token, and
// returns it.
func (d *testDaemon) tokenOf(id string) string {
	d.t.Helper()
	var token string
	d.logs.waitUntil(d.t, "the token of "+id, func(log string) bool {
		for _, m := range tokenLine.FindAllStringSubmatch(log, -1) {
			if m[1] == id {
				token = m[2]
			}
		}
		return token != ""
	})
	return token
}

// syncBuffer is the daemon's log, waited on by the tests.
type syncBuffer struct{ testenv.LogBuffer }

// waitUntil waits until the log satisfies ok.
func (s *syncBuffer) waitUntil(t testing.TB, what string, ok func(string) bool) {
	t.Helper()
	if !s.WaitUntil(waitLimit, ok) {
		t.Fatalf("the daemon's log never showed %s", what)
	}
}

// waitForCount waits until the log holds substr n times.
func (s *syncBuffer) waitForCount(t testing.TB, substr string, n int) {
	t.Helper()
	s.waitUntil(t, fmt.Sprintf("%q %d times", substr, n), func(log string) bool { return strings.Count(log, substr) >= n })
}
