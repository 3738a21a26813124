package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/daemon"
)

// A reload keeps the sessions of servers whose settings did not change,
// stops the instances of a changed one (its clients' sessions end), starts
// an added one's pool and says so.
func TestReloadKeepsUnchangedSessions(t *testing.T) {
	requireConfinement(t)
	d := startDaemon(t, configOf(tokenEntry(t, "same", ""), tokenEntry(t, "tuned", ""), tokenEntry(t, "changes", ""), tokenEntry(t, "goes", "")))
	same, tuned, changes := d.connect("same", ""), d.connect("tuned", ""), d.connect("changes", "2025-11-25")
	token, tunedToken := same.call(t, "token", nil), tuned.call(t, "token", nil)
	changes.call(t, "token", nil)

	d.write(configOf(
		tokenEntry(t, "same", ""),
		tokenEntry(t, "tuned", `, "max-instances": 4`),
		tokenEntry(t, "changes", `, "env": {"NEW": "1"}`),
		tokenEntry(t, "new", `, "prestart": 1`),
	))
	a := d.control(daemon.Hello{Control: daemon.ControlReload})
	if !a.OK {
		t.Fatalf("reload: %+v", a.Error)
	}
	r := a.Reload
	if !slices.Equal(r.Unchanged, []string{"same"}) || !slices.Equal(r.Updated, []string{"tuned"}) || !slices.Equal(r.Changed, []string{"changes"}) ||
		!slices.Equal(r.Added, []string{"new"}) || !slices.Equal(r.Removed, []string{"goes"}) || r.Stopped != 1 {
		t.Errorf("reload report: %+v", r)
	}
	if got := same.call(t, "token", nil); got != token {
		t.Errorf("the unchanged server's session is answered by %s, was %s", got, token)
	}
	if got := tuned.call(t, "token", nil); got != tunedToken {
		t.Errorf("the session of the server updated in place is answered by %s, was %s", got, tunedToken)
	}
	if st := d.status(); st.Servers[1].Name != "tuned" || st.Servers[1].MaxInstances != 4 {
		t.Errorf("max-instances not applied in place: %+v", st.Servers[1])
	}
	if i := d.instance("same#1"); i.Restarts != 0 || i.Generation != 1 {
		t.Errorf("the unchanged server's instance: %+v", i)
	}
	// The changed server's session ended: the client's connection closes.
	waitClosed(t, changes)
	d.logs.waitUntil(t, "new's warm instance", func(log string) bool {
		return strings.Contains(log, `msg="mcpsandbox daemon: instance warm" server=new instance=new#1`)
	})
	if c := d.connect("changes", ""); c.instance != "changes#2" {
		t.Errorf("a new client of the changed server got %s", c.instance)
	}
	d.logs.waitForCount(t, "reason=\"its settings changed in the config (reload); new instances get them\"", 1)
}

// A reload that changes only a server's launch line (an upgrade writes a
// new package version into it) swaps each instance onto the new line
// through the invisible restart: the connected Go SDK client's session
// goes on, answered by the new process; nothing is stopped.
func TestReloadSwapsALaunchLineKeepingSessions(t *testing.T) {
	requireConfinement(t)
	d := startDaemon(t, configOf(tokenEntry(t, "up", "")))
	c := d.connect("up", "")
	before := c.call(t, "token", nil)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	d.write(configOf(fmt.Sprintf(`"up": {"command": %q, "args": [%q, "v2"], %s}`, exe, roleTokenServer, testPolicy)))
	a := d.control(daemon.Hello{Control: daemon.ControlReload})
	if !a.OK {
		t.Fatalf("reload: %+v", a.Error)
	}
	if r := a.Reload; !slices.Equal(r.Swapped, []string{"up"}) || len(r.Changed) != 0 || r.Stopped != 0 {
		t.Errorf("reload report: %+v, want up swapped, nothing stopped", r)
	}
	after := c.call(t, "token", nil)
	if !strings.HasSuffix(after, " v2") || strings.HasPrefix(after, before) {
		t.Errorf("after the swap the session is answered by %q (before: %q), want a new process of the new line (v2)", after, before)
	}
	if i := d.instance(c.instance); i.Generation != 2 {
		t.Errorf("the swapped instance: %+v, want generation 2", i)
	}
}

// A reload of a config with an error keeps the running one and names the
// error's file:line:col, to the reload request and in the log (SIGHUP).
func TestReloadErrorKeepsTheRunningConfig(t *testing.T) {
	requireConfinement(t)
	d := startDaemon(t, configOf(tokenEntry(t, "kept", "")))
	c := d.connect("kept", "")
	token := c.call(t, "token", nil)

	d.write(configOf(tokenEntry(t, "kept", `, "prestart": "many"`)))
	a := d.control(daemon.Hello{Control: daemon.ControlReload})
	if a.OK || a.Error.Kind != daemon.RefusedReload {
		t.Fatalf("reload of a bad config: %+v", a)
	}
	if !strings.Contains(a.Error.Reason, d.config+":2:") || !strings.Contains(a.Error.Reason, "prestart must be a whole number") ||
		!strings.Contains(a.Error.Reason, "the running one stays") {
		t.Errorf("reload's refusal: %q", a.Error.Reason)
	}
	d.reload <- struct{}{} // SIGHUP
	d.logs.waitForCount(t, `msg="mcpsandbox daemon: reload failed; the running config stays"`, 2)
	if got := c.call(t, "token", nil); got != token {
		t.Errorf("after the failed reload the session is answered by %s, was %s", got, token)
	}
	if st := d.status(); len(st.Servers) != 1 || st.Servers[0].Prestart != 0 {
		t.Errorf("status after the failed reload: %+v", st.Servers)
	}
}

// A config that does not load, or whose entry does not resolve (here: a
// policy file that is not there), is refused at start, at file:line:col.
func TestStartRefusesAConfigThatDoesNotResolve(t *testing.T) {
	for _, c := range []struct{ keys, want string }{
		{`"policy": {"limits": {"memory": "lots"}}`, ": limits.memory"},
		{`"policy": "./missing.yaml"`, ": policy "},
	} {
		_, err := tryDaemon(t, configOf(tokenEntry(t, "fine", ""), entryWith(t, "bad", c.keys)))
		var ce *daemon.ConfigError
		if err == nil || !errors.As(err, &ce) {
			t.Fatalf("Run: %v, want a ConfigError", err)
		}
		if !regexp.MustCompile(`servers\.json:3:\d+` + regexp.QuoteMeta(c.want)).MatchString(err.Error()) {
			t.Errorf("%s: error %q does not name the place %s", c.keys, err, c.want)
		}
	}
}

// waitClosed waits until the server side of c's session has closed it.
func waitClosed(t *testing.T, c *client) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case <-done:
	case <-time.After(waitLimit):
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "token"})
		t.Fatalf("the session of %s is still open (a call: %v)", c.instance, err)
	}
}

// A disabled entry runs nothing; a client of it is told so.
func TestDisabledServerIsRefusedSayingSo(t *testing.T) {
	d := startDaemon(t, configOf(tokenEntry(t, "off", `, "disabled": true`)))
	_, refusal := daemon.ConnectTo([]string{d.socket}, "off")
	if refusal == nil || refusal.Kind != daemon.RefusedNoServer || !strings.Contains(refusal.Reason, `server "off" is disabled`) {
		t.Errorf("connect to a disabled server: %+v", refusal)
	}
	if st := d.status(); len(st.Servers) != 0 {
		t.Errorf("status lists a disabled server: %+v", st.Servers)
	}
}
