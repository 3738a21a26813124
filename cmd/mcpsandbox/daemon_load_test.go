package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpsandbox/mcpsandbox/daemon"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// loadServer is the name of the load test's server i.
func loadServer(i int) string { return fmt.Sprintf("s%02d", i) }

// loadConfig is the load test's config: n example servers, one warm
// instance each; s49 lets uid 4242 in; changed gives one server a tool
// prefix (a setting its sessions see).
func loadConfig(t *testing.T, n int, changed string) string {
	t.Helper()
	var entries []daemonEntry
	for i := range n {
		keys := map[string]any{"prestart": 1}
		if i == n-1 {
			keys["users"] = []any{otherUID}
		}
		if loadServer(i) == changed {
			keys["policy"] = map[string]any{"mcp": map[string]any{"tool-prefix": "v2_"}}
		}
		entries = append(entries, exampleEntry(t, loadServer(i), keys))
	}
	return claudeConfig(t, entries...)
}

// otherUID is a uid no one on the test machine has.
const otherUID = 4242

// loadClient is one of the load test's hosts, on server s(index).
type loadClient struct {
	index    int
	server   string
	h        *goDaemonHost
	inst     daemon.InstanceStatus // its instance, as status showed it at attach
	token    string                // its server process's, from the instance tool
	calls    atomic.Int64
	failures []error // calls that got an error, under mu
	mu       sync.Mutex
}

// A daemon keeping 50 servers warm (the example server, confined as by
// default), 20 Go SDK hosts attaching through connect at once, each to a
// server of its own: each gets its own process and answers. Killing one
// instance's process while every host keeps calling restarts that one
// alone: the others see no error and keep their process, and every
// request of every host is answered exactly once (counted on the wire).
// A uid the config does not allow is refused, told why; one it allows
// gets in. A reload that changes one server's entry leaves the other
// sessions and warm instances as they were (same instance, same pid, still
// answering), ends the changed one's, and its new instances have the new
// setting.
func TestDaemonLoadFiftyServersTwentyClients(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the load test starts 70 confined servers")
	}
	requireConfinement(t)
	const servers, clients, victim, changed = 50, 20, 5, 10
	if os.Geteuid() == 0 {
		// The servers' own limits (1 GiB each by default) add up to more
		// than the machine: a sandbox bug must hit this bound first.
		testenv.OuterLimit(t, int64(servers+clients)*64<<20+1<<30, int64(servers+clients)*64+1024)
	} else {
		t.Log("not root: no outer cgroup around the daemon; each server is bound by its sandbox's own limits")
	}

	begin := time.Now()
	d := startE2EDaemon(t, loadConfig(t, servers, ""), nil, "--log-level", "info")
	d.waitStatus(fmt.Sprintf("%d servers with a warm instance each", servers), func(st *daemon.Status) bool {
		warm := 0
		for _, s := range st.Servers {
			if len(s.Instances) == 1 && s.Instances[0].State == "warm" {
				warm++
			}
		}
		return warm == servers
	})
	t.Logf("%d confined servers warm %v after the daemon started", servers, time.Since(begin).Round(time.Millisecond))

	// Twenty hosts at once, half in each session style.
	cs := make([]*loadClient, clients)
	var wg sync.WaitGroup
	errs := make([]error, clients)
	begin = time.Now()
	for i := range cs {
		cs[i] = &loadClient{index: i, server: loadServer(i)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			version := ""
			if i%2 == 1 {
				version = "2025-11-25"
			}
			c := cs[i]
			if c.h, errs[i] = d.connectGo(t, c.server, version); errs[i] != nil {
				return
			}
			if _, errs[i] = c.h.tools(); errs[i] != nil {
				return
			}
			c.token, errs[i] = c.callText("instance", nil)
			if errs[i] == nil {
				errs[i] = c.echo("first")
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("attaching %d hosts at once: %v", clients, err)
	}
	t.Logf("%d hosts attached through connect and answered in %v", clients, time.Since(begin).Round(time.Millisecond))
	st := d.status()
	tokens, pids := map[string]int{}, map[int]int{}
	for _, c := range cs {
		inst, ok := instanceOfClient(st, c.h.pid())
		if !ok || !strings.HasPrefix(inst.ID, c.server+"#") || inst.State != "running" {
			t.Fatalf("host %d's instance: %+v (found %v); want a running one of %s", c.index, inst, ok, c.server)
		}
		c.inst = inst
		tokens[c.token]++
		pids[inst.Pid]++
	}
	if len(tokens) != clients || len(pids) != clients {
		t.Errorf("%d hosts were answered by %d server processes (%d pids); want one each", clients, len(tokens), len(pids))
	}
	logFootprint(t, st)

	d.crashOneWhileAllCall(t, cs, cs[victim])
	if os.Geteuid() == 0 {
		refusedUID(t, d, loadServer(clients), loadServer(servers-1))
	} else {
		t.Log("not root: the uid check needs a client of another uid")
	}
	d.reloadChangingOne(t, cs, cs[changed], loadConfig(t, servers, loadServer(changed)))
}

func (c *loadClient) callText(tool string, args map[string]any) (string, error) {
	text, isErr, err := c.h.call(tool, args)
	if err == nil && isErr {
		err = fmt.Errorf("error result %q", text)
	}
	if err != nil {
		return "", fmt.Errorf("host %d (%s): %s: %w", c.index, c.server, tool, err)
	}
	return text, nil
}

// echo calls echo with a text of its own and checks the answer is it.
func (c *loadClient) echo(text string) error {
	text = fmt.Sprintf("host %d: %s", c.index, text)
	got, err := c.callText("echo", map[string]any{"text": text})
	if err == nil && got != text {
		err = fmt.Errorf("host %d (%s): echo %q answered %q", c.index, c.server, text, got)
	}
	return err
}

// crashOneWhileAllCall keeps every host calling, two calls in flight each,
// kills victim's server process, and lets every host call on a while
// after it restarted.
func (d *e2eDaemon) crashOneWhileAllCall(t *testing.T, cs []*loadClient, victim *loadClient) {
	t.Helper()
	const loops, callsAround = 2, 3
	var phase atomic.Int32 // 0 before the kill, 1 once the victim restarted
	var before, after sync.WaitGroup
	stop := make(chan struct{})
	var running sync.WaitGroup
	for _, c := range cs {
		before.Add(1)
		after.Add(1)
		var n [2]atomic.Int32 // the client's calls in each phase
		for l := range loops {
			running.Add(1)
			go func() {
				defer running.Done()
				for k := 0; ; k++ {
					select {
					case <-stop:
						return
					default:
					}
					p := phase.Load()
					if err := c.echo(fmt.Sprintf("loop %d call %d", l, k)); err != nil {
						c.mu.Lock()
						c.failures = append(c.failures, err)
						c.mu.Unlock()
					}
					c.calls.Add(1)
					if n[p].Add(1) == callsAround*loops {
						[]*sync.WaitGroup{&before, &after}[p].Done()
					}
				}
			}()
		}
	}
	before.Wait()
	killed := time.Now()
	restarted := d.killServer(victim.inst)
	t.Logf("%s's process %d killed while %d hosts called; %s restarted as %d in %v", victim.inst.ID, victim.inst.Pid, len(cs), restarted.ID, restarted.Pid, time.Since(killed).Round(time.Millisecond))
	phase.Store(1)
	after.Wait()
	close(stop)
	running.Wait()

	st := d.status()
	calls, requests := 0, 0
	for _, c := range cs {
		calls += int(c.calls.Load())
		requests += c.h.wire.requests()
		for _, bad := range c.h.wire.check() {
			t.Errorf("host %d (%s): %s", c.index, c.server, bad)
		}
		inst, _ := instanceOfClient(st, c.h.pid())
		token, err := c.callText("instance", nil)
		if err != nil {
			t.Error(err)
		}
		if c == victim {
			for _, err := range c.failures {
				var we *jsonrpc.Error
				if !errors.As(err, &we) || we.Code != supervisor.CodeServerCrashed {
					t.Errorf("the crashed server's host got %v; want its calls answered, or those in flight at the crash with %d (server crashed)", err, supervisor.CodeServerCrashed)
				}
			}
			if inst.ID != c.inst.ID || inst.Restarts != 1 || inst.Generation != 2 || token == c.token {
				t.Errorf("the crashed instance after the crash: %+v, token %s (was %s); want %s restarted once, a new process", inst, token, c.token, c.inst.ID)
			}
			t.Logf("the crashed server's host: %d calls, %d answered with 'server crashed'", c.calls.Load(), len(c.failures))
			continue
		}
		if len(c.failures) > 0 {
			t.Errorf("host %d (%s), whose server was not killed, got errors: %v", c.index, c.server, errors.Join(c.failures...))
		}
		if inst.ID != c.inst.ID || inst.Pid != c.inst.Pid || inst.Restarts != 0 || token != c.token {
			t.Errorf("host %d's instance after another's crash: %+v, token %s; want %+v, token %s", c.index, inst, token, c.inst, c.token)
		}
	}
	t.Logf("%d calls over %d hosts, %d requests on their wires in all, each answered once", calls, len(cs), requests)
}

// refusedUID connects as uid 4242 to refused, which the config does not
// let it use, and to allowed, whose users name it: a raw JSON-RPC host
// whose every request is answered once.
func refusedUID(t *testing.T, d *e2eDaemon, refused, allowed string) {
	t.Helper()
	bin := testenv.SelfForOthers(t) // go test's build directory is root's alone
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"uid-4242","version":"1"}}}`

	h := startRawHost(t, otherUID, bin, asCLI, "connect", refused, "--socket-dir", d.sockets)
	h.send(initialize)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.send(`{"jsonrpc":"2.0","id":"two","method":"tools/list"}`)
	answers, code := h.closeAndRead()
	if code != 1 {
		t.Errorf("connect as uid %d to %s exited %d, want 1 (no instance could be had)", otherUID, refused, code)
	}
	if got := len(answers); got != 2 || string(answers[0].ID) != "1" || string(answers[1].ID) != `"two"` {
		t.Fatalf("uid %d's 2 requests got answers %+v; want one each, in order", otherUID, answers)
	}
	for _, a := range answers {
		if a.Error == nil || a.Error.Code != supervisor.CodeServerUnavailable {
			t.Errorf("uid %d's request %s answered %+v; want error %d", otherUID, a.ID, a, supervisor.CodeServerUnavailable)
			continue
		}
		for _, want := range []string{"uid 4242", fmt.Sprintf("%q", refused), "users", d.config} {
			if !strings.Contains(a.Error.Data.Reason, want) {
				t.Errorf("the refusal's reason %q does not name %s", a.Error.Data.Reason, want)
			}
		}
	}
	if !strings.Contains(h.stderr.String(), "uid 4242") {
		t.Errorf("connect's stderr, which hosts log, does not say why: %s", h.stderr)
	}
	d.waitLog("client refused", "server="+refused, "uid=4242")

	h = startRawHost(t, otherUID, bin, asCLI, "connect", allowed, "--socket-dir", d.sockets)
	h.send(initialize)
	if a := h.next(); string(a.ID) != "1" || a.Error != nil || !strings.Contains(string(a.Result), `"protocolVersion"`) {
		t.Errorf("uid %d's initialize to %s, whose users name it: %+v", otherUID, allowed, a)
	}
	if _, code := h.closeAndRead(); code != 0 {
		t.Errorf("connect as uid %d to %s exited %d after the session, want 0", otherUID, allowed, code)
	}
}

// reloadChangingOne rewrites the config with changed's entry changed and
// runs `mcpsandbox reload`.
func (d *e2eDaemon) reloadChangingOne(t *testing.T, cs []*loadClient, changed *loadClient, config string) {
	t.Helper()
	// Prestarts under way (the pools refilling behind the hosts) would
	// change state on their own: compare once every pool is full.
	before := d.waitStatus("no prestart under way", func(st *daemon.Status) bool {
		for _, s := range st.Servers {
			for _, i := range s.Instances {
				if i.State == "starting" {
					return false
				}
			}
		}
		return true
	})
	d.write(config)
	out, errOut, err := d.cli("reload")
	if err != nil {
		t.Fatalf("mcpsandbox reload: %v\n%s", err, errOut)
	}
	t.Logf("mcpsandbox reload: %s", strings.TrimSpace(out))
	if !strings.Contains(out, "; changed: "+changed.server+" (") {
		t.Errorf("reload says %q; want %s alone changed", out, changed.server)
	}
	// The changed server's instances end; every other one stays as it was.
	after := d.waitStatus(changed.inst.ID+" stopped by the reload", func(st *daemon.Status) bool {
		_, ok := instanceByID(st, changed.inst.ID)
		return !ok
	})
	for _, s := range before.Servers {
		if s.Name == changed.server {
			continue
		}
		for _, was := range s.Instances {
			now, ok := instanceByID(after, was.ID)
			if !ok || now.Pid != was.Pid || now.Generation != was.Generation || now.State != was.State {
				t.Errorf("%s after the reload: %+v (there %v); want it untouched: %+v", was.ID, now, ok, was)
			}
		}
	}
	for _, c := range cs {
		if c == changed {
			continue
		}
		if err := c.echo("after the reload"); err != nil {
			t.Error(err)
		}
	}
	if _, err := changed.callText("echo", map[string]any{"text": "after the reload"}); err == nil {
		t.Errorf("host %d's session on %s, whose entry changed, still answers after the reload", changed.index, changed.server)
	}

	h := d.mustConnectGo(t, changed.server, "")
	tools, err := h.tools()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(tools, " "), "v2_echo") || strings.Contains(" "+strings.Join(tools, " ")+" ", " echo ") {
		t.Errorf("a new session on %s lists tools %v; want them under the new prefix v2_", changed.server, tools)
	}
	if text, isErr, err := h.call("v2_echo", map[string]any{"text": "new settings"}); err != nil || isErr || text != "new settings" {
		t.Errorf("v2_echo on the reloaded %s: %q, %v", changed.server, text, err)
	}
}

// logFootprint logs what status says the instances use.
func logFootprint(t *testing.T, st *daemon.Status) {
	var n int
	var mem uint64
	for _, s := range st.Servers {
		for _, i := range s.Instances {
			if i.Pid != 0 { // not a prestart still under way
				n++
				mem += i.Memory
			}
		}
	}
	if n > 0 {
		t.Logf("%d instances with a process, %d MiB in their cgroups (%.1f MiB each)", n, mem>>20, float64(mem)/float64(n)/(1<<20))
	}
}
