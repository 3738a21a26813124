package notify

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// sessionBus starts a real dbus-daemon as a session bus of the test's own
// (listening in a temporary directory, EXTERNAL authentication) and
// returns its address. The desktop's notification service is not here:
// tests register a stand-in for it on this bus (standIn), since no desktop
// runs on a test machine.
func sessionBus(t *testing.T) string {
	t.Helper()
	daemon, err := exec.LookPath("dbus-daemon")
	if err != nil {
		t.Skip("dbus-daemon is not installed (Debian: apt-get install dbus-daemon; scripts/test-setup.sh installs it)")
	}
	dir := t.TempDir()
	config := filepath.Join(dir, "session.conf")
	err = os.WriteFile(config, []byte(`<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=`+filepath.Join(dir, "bus")+`</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
    <allow own="*"/>
  </policy>
</busconfig>
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(daemon, "--config-file="+config, "--nofork", "--nopidfile", "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logged, err := os.Create(filepath.Join(dir, "daemon.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logged.Close()
	cmd.Stderr = logged
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			log, _ := os.ReadFile(logged.Name())
			t.Logf("dbus-daemon's log:\n%s", log)
		}
	})
	// The daemon prints its address once it listens.
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon printed no address: %v", err)
	}
	return strings.TrimSpace(addr)
}

// notification is one Notify call as the service received it.
type notification struct {
	app, summary, body string
	replaces           uint32
	hints              map[string]dbus.Variant
	expire             int32
}

// standIn is org.freedesktop.Notifications as a desktop serves it, reduced
// to its Notify method: it hands each call to the test, and answers once
// answer is closed.
type standIn struct {
	got    chan notification
	answer chan struct{}
}

func (s *standIn) Notify(app string, replaces uint32, icon, summary, body string, actions []string, hints map[string]dbus.Variant, expire int32) (uint32, *dbus.Error) {
	s.got <- notification{app: app, summary: summary, body: body, replaces: replaces, hints: hints, expire: expire}
	<-s.answer
	return 7, nil
}

// serve registers a stand-in service on the bus at addr.
func serve(t *testing.T, addr string) *standIn {
	t.Helper()
	// The connection lives as long as its context: the test's.
	conn, err := dbus.Connect(addr, dbus.WithContext(t.Context()), dbus.WithAuth(dbus.AuthExternal(strconv.Itoa(os.Getuid()))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	s := &standIn{got: make(chan notification, 1), answer: make(chan struct{})}
	if err := conn.Export(s, path, service); err != nil {
		t.Fatal(err)
	}
	if reply, err := conn.RequestName(service, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("RequestName %s: %v, %v", service, reply, err)
	}
	return s
}

func TestNotifyShowsItOnTheSessionBus(t *testing.T) {
	addr := sessionBus(t)
	s := serve(t, addr)
	close(s.answer)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	body := `write_file of @modelcontextprotocol/server-filesystem: {"path":"<b>/home/you/notes</b>","content":"***"} — mcpsandbox approve k3v7qd2mxa`
	if err := Notify("mcpsandbox: a call waits for your approval", body); err != nil {
		t.Fatal(err)
	}
	got := <-s.got
	if got.app != "mcpsandbox" || got.summary != "mcpsandbox: a call waits for your approval" || got.replaces != 0 || got.expire != -1 {
		t.Errorf("the service got %+v", got)
	}
	if want := `write_file of @modelcontextprotocol/server-filesystem: {"path":"&lt;b&gt;/home/you/notes&lt;/b&gt;","content":"***"} — mcpsandbox approve k3v7qd2mxa`; got.body != want {
		t.Errorf("body %q\nwant %q (markup escaped: it is the server's text)", got.body, want)
	}
	if u, ok := got.hints["urgency"].Value().(byte); !ok || u != 1 {
		t.Errorf("urgency hint %v, want 1 (normal)", got.hints["urgency"])
	}

	long := strings.Repeat("x", 2*maxBody)
	if err := Notify("s", long); err != nil {
		t.Fatal(err)
	}
	if got := <-s.got; len([]rune(got.body)) != maxBody || !strings.HasSuffix(got.body, "…") {
		t.Errorf("a long body arrives as %d characters, want %d ending in …", len([]rune(got.body)), maxBody)
	}
}

func TestNotifyWithoutABusOrServiceFailsAtOnce(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	if err := Notify("s", "b"); !errors.Is(err, ErrNoSessionBus) {
		t.Errorf("without DBUS_SESSION_BUS_ADDRESS: %v, want ErrNoSessionBus", err)
	}
	addr := sessionBus(t)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	var de dbus.Error
	if err := Notify("s", "b"); !errors.As(err, &de) || de.Name != "org.freedesktop.DBus.Error.ServiceUnknown" {
		t.Errorf("a bus without a notification service: %v, want org.freedesktop.DBus.Error.ServiceUnknown", err)
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(t.TempDir(), "none"))
	if err := Notify("s", "b"); err == nil {
		t.Error("a bus address with no bus: no error")
	}
}

// A notification service that never answers holds the caller no longer
// than its context.
func TestNotifyDoesNotWaitForAHungDesktop(t *testing.T) {
	addr := sessionBus(t)
	s := serve(t, addr)
	defer close(s.answer)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := notifyAt(ctx, addr, "s", "b")
	<-s.got
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a desktop that never answers: %v, want the context's deadline", err)
	}
}

// Desktop logs why it cannot notify once, at debug level, however often
// it is asked.
func TestDesktopLogsItsFailureOnce(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	var log strings.Builder
	d := &Desktop{Log: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	for range 3 {
		d.Notify("s", "b")
	}
	if got := strings.Count(log.String(), "no desktop notification"); got != 1 || !strings.Contains(log.String(), "level=DEBUG") ||
		!strings.Contains(log.String(), "DBUS_SESSION_BUS_ADDRESS is not set") {
		t.Errorf("logged %d times:\n%s", got, log.String())
	}
}
