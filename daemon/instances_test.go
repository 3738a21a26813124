package daemon_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/daemon"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// Each client gets an instance of its own, which ends when the client
// leaves; status shows each with its client.
func TestEachClientGetsItsOwnInstance(t *testing.T) {
	requireConfinement(t)
	d := startDaemon(t, configOf(tokenEntry(t, "echo", "")))
	a := d.connect("echo", "2025-11-25")
	b := d.connect("echo", "")
	if a.instance != "echo#1" || b.instance != "echo#2" {
		t.Errorf("instances %s and %s, want echo#1 and echo#2", a.instance, b.instance)
	}
	ta, tb := a.call(t, "token", nil), b.call(t, "token", nil)
	if ta != d.tokenOf("echo#1") || tb != d.tokenOf("echo#2") || ta == tb {
		t.Errorf("tokens %s (echo#1) and %s (echo#2): each client must be answered by its own process", ta, tb)
	}
	for _, id := range []string{"echo#1", "echo#2"} {
		i := d.instance(id)
		if i.State != "running" || i.Pid == 0 || i.Generation != 1 || i.ClientUID == nil || *i.ClientUID != os.Geteuid() || i.Attached == nil || i.Started == nil {
			t.Errorf("status of %s: %+v", id, i)
		}
	}
	a.Close()
	d.logs.waitUntil(t, "echo#1 ending", func(log string) bool {
		return strings.Contains(log, `msg="mcpsandbox daemon: instance ended" server=echo instance=echo#1`)
	})
	st := d.status()
	if n := len(st.Servers[0].Instances); n != 1 || st.Servers[0].Instances[0].ID != "echo#2" {
		t.Errorf("after echo#1's client left: %+v", st.Servers[0].Instances)
	}
	if got := b.call(t, "echo", map[string]any{"text": "still here"}); got != "still here" {
		t.Errorf("echo#2 after echo#1 ended: %q", got)
	}
}

// A warm instance is the one that answers: its process, started before
// the client came, answers the client's first call; the pool is refilled
// behind it. Status tells warm from attached.
func TestWarmInstanceAnswersTheClient(t *testing.T) {
	requireConfinement(t)
	d := startDaemon(t, configOf(tokenEntry(t, "warm", `, "prestart": 1`)))
	d.logs.waitForCount(t, `msg="mcpsandbox daemon: instance warm"`, 1)
	token := d.tokenOf("warm#1")
	before := d.instance("warm#1")
	if before.State != "warm" || before.Pid == 0 || before.ClientUID != nil || before.Started == nil {
		t.Fatalf("status of the prestarted instance: %+v", before)
	}
	connected := time.Now()
	c := d.connect("warm", "")
	if c.instance != "warm#1" {
		t.Errorf("the client got %s, not the warm warm#1", c.instance)
	}
	if got := c.call(t, "token", nil); got != token {
		t.Errorf("the first call was answered by token %s, the warm process's is %s", got, token)
	}
	after := d.instance("warm#1")
	if after.State != "running" || after.Pid != before.Pid || after.Generation != 1 || after.Restarts != 0 || after.ClientUID == nil {
		t.Errorf("status once attached: %+v (warm: %+v)", after, before)
	}
	if !after.Started.Before(connected) {
		t.Errorf("the process started %s, not before the client came (%s)", after.Started, connected)
	}
	d.logs.waitForCount(t, `msg="mcpsandbox daemon: instance warm"`, 2) // the refill
	if next := d.instance("warm#2"); next.State != "warm" {
		t.Errorf("the pool's refill: %+v", next)
	}
	st := d.status().Servers[0]
	if st.Prestart != 1 || st.MaxInstances != 16 || st.Policy == "" || st.Why == "" {
		t.Errorf("server status: %+v", st)
	}
}

// A client over max-instances is refused with CodeServerUnavailable, the
// reason naming the bound and where to raise it; warm instances count.
func TestMaxInstancesRefusesTheClientOver(t *testing.T) {
	requireConfinement(t)
	d := startDaemon(t, configOf(tokenEntry(t, "one", `, "prestart": 1, "max-instances": 1`)))
	d.logs.waitForCount(t, `msg="mcpsandbox daemon: instance warm"`, 1)
	c := d.connect("one", "")
	_, refusal := daemon.ConnectTo([]string{d.socket}, "one")
	if refusal == nil {
		t.Fatal("a second client got an instance past max-instances 1")
	}
	if refusal.Code != supervisor.CodeServerUnavailable || refusal.Kind != daemon.RefusedMaxInstances || refusal.Message != "server unavailable" {
		t.Errorf("refusal: %+v", refusal)
	}
	for _, want := range []string{`"one"`, "max-instances, 1", d.config + ":2:"} {
		if !strings.Contains(refusal.Reason, want) {
			t.Errorf("reason %q does not say %q", refusal.Reason, want)
		}
	}
	c.Close()
	d.logs.waitForCount(t, `msg="mcpsandbox daemon: instance warm"`, 2) // room again: the pool refills
	if c2 := d.connect("one", ""); c2.instance != "one#2" {
		t.Errorf("after the first client left, the next got %s", c2.instance)
	}
}

// A client that comes while a prestart is under way waits for it rather
// than starting another instance: the prestarted process answers it.
func TestClientWaitsForThePrestartUnderWay(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Unconfined: the gate is the pool's test, not the sandbox's.
	d := startDaemon(t, configOf(fmt.Sprintf(`"slow": {"command": %q, "args": [%q, %q], "prestart": 1, "policy": {"unconfined": true, "health": {"ping-interval": "0s"}, "restart": {"grace": "300ms"}}}`,
		exe, roleGatedTokenServer, gate)))
	d.logs.waitForCount(t, `msg="server started" instance=slow#1`, 1)
	got := make(chan *client, 1)
	go func() { got <- d.connect("slow", "") }()
	d.logs.waitForCount(t, `msg="mcpsandbox daemon: a client waits for the prestart under way" server=slow`, 1)
	f, err := os.OpenFile(gate, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{1})
	f.Close()
	select {
	case c := <-got:
		if c.instance != "slow#1" {
			t.Errorf("the client got %s, not the prestart under way, slow#1", c.instance)
		}
		if tok := c.call(t, "token", nil); tok != d.tokenOf("slow#1") {
			t.Errorf("answered by %s, not slow#1's process", tok)
		}
	case <-time.After(waitLimit):
		t.Fatal("the client got no instance")
	}
}

// Failing prestarts back off and are logged once while the reason stays
// the same; status says why the pool is empty.
func TestFailingPrestartsBackOffQuietly(t *testing.T) {
	requireConfinement(t)
	d := startDaemon(t, configOf(`"broken": {"command": "/bin/false", "prestart": 1, `+testPolicy+`}`))
	d.logs.waitForCount(t, `msg="mcpsandbox daemon: prestart failed again" server=broken failures=2`, 1)
	if n := strings.Count(d.logs.String(), `msg="mcpsandbox daemon: prestart failed; retrying with backoff`); n != 1 {
		t.Errorf("the failure was logged %d times at warning, want once:\n%s", n, d.logs)
	}
	if !strings.Contains(d.logs.String(), `retry_in=2s`) {
		t.Errorf("the second failure does not wait longer than the first:\n%s", d.logs)
	}
	if st := d.status().Servers[0]; st.Backoff == "" {
		t.Errorf("status does not say why prestarts wait: %+v", st)
	}
}
