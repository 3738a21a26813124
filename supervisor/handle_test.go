package supervisor_test

//lint:file-ignore SA1019 a warm server must learn its real client's capabilities: roots show it, and the SDK marks them deprecated for the stateless protocol

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// prestarted is a session prestarted with supervisor.Prestart and not yet
// given its host; attach gives it the test's harness as host.
type prestarted struct {
	s      *supervisor.Session
	events chan supervisor.Event
	logs   *syncBuffer
	cancel context.CancelFunc
}

func prestart(t *testing.T, pol policy.Policy) *prestarted {
	t.Helper()
	if !pol.Unconfined {
		requireConfinement(t)
	}
	p := &prestarted{events: make(chan supervisor.Event, 256), logs: &syncBuffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	s, err := supervisor.Prestart(ctx, supervisor.Options{
		Name: "test", Policy: pol, LookupEnv: os.LookupEnv,
		Log:    slog.New(slog.NewTextHandler(p.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Events: func(e supervisor.Event) { p.events <- e },
	})
	if err != nil {
		cancel()
		t.Fatalf("Prestart: %v\n%s", err, p.logs)
	}
	p.s = s
	t.Cleanup(func() {
		cancel()
		s.Wait()
		if t.Failed() {
			t.Logf("supervisor log:\n%s", p.logs)
		}
	})
	return p
}

// attach makes p's session the relay of a harness host.
func (p *prestarted) attach(t *testing.T) *relay {
	t.Helper()
	hostInR, hostInW := io.Pipe()
	hostOutR, hostOutW := io.Pipe()
	r := &relay{t: t, toRelay: hostInW, fromRly: hostOutR, events: p.events, outcome: make(chan supervisor.Outcome, 1), logs: p.logs, cancel: p.cancel}
	if err := p.s.Attach(hostInR, hostOutW); err != nil {
		t.Fatalf("Attach: %v", err)
	}
	go func() {
		out, err := p.s.Wait()
		if err != nil {
			out.Reason = "Run error: " + err.Error()
		}
		hostOutW.Close()
		hostInR.Close()
		r.outcome <- out
	}()
	t.Cleanup(func() { hostInW.Close(); hostOutR.Close() })
	return r
}

// startedEvents drains the events seen so far and counts the processes started.
func startedEvents(events chan supervisor.Event) (pids []int) {
	for {
		select {
		case e := <-events:
			if e.Kind == supervisor.EventStarted {
				pids = append(pids, e.Pid)
			}
		default:
			return pids
		}
	}
}

// A prestarted session's process is started and ready before any client;
// the client's own initialize is the first it sees (it negotiates the
// client's version and capabilities: the server asks this client for its
// roots), and its tools/call is answered by that same process.
func TestPrestartedSessionServesItsClientWithTheWarmProcess(t *testing.T) {
	for _, version := range []string{"2025-11-25", ""} { // classic, and the SDK's default (stateless first)
		t.Run("protocol="+version, func(t *testing.T) {
			p := prestart(t, testPolicy(exampleCommand(t)))
			st := p.s.Status()
			warm := startedEvents(p.events)
			if st.State != "warm" || len(warm) != 1 || st.Pid != warm[0] || st.Generation != 1 {
				t.Fatalf("before attach: status %+v, processes started %v; want one warm process, its pid in the status", st, warm)
			}
			r := p.attach(t)
			c := mcp.NewClient(&mcp.Implementation{Name: "warm-host", Version: "1.0"}, nil)
			c.AddRoots(&mcp.Root{URI: "file:///one"}, &mcp.Root{URI: "file:///two"})
			cs := r.sdkClientWith(c, version)
			defer cs.Close()
			if got := cs.InitializeResult(); version != "" && (got == nil || got.ProtocolVersion != version) {
				t.Fatalf("initialize result %+v, want protocol %s negotiated with the client itself", got, version)
			}
			if version != "" {
				if n := mustCallTool(t, cs, "roots", nil); n != "2 roots" {
					t.Fatalf("the warm server counted %q of its client, want 2 roots (it must know the real client's capabilities)", n)
				}
			}
			mustCallTool(t, cs, "echo", map[string]any{"text": "hi"})
			st = p.s.Status()
			if more := startedEvents(p.events); len(more) != 0 || st.Pid != warm[0] || st.State != "running" {
				t.Fatalf("after the client's calls: status %+v, more processes started %v; want the warm process (pid %d) serving", st, more, warm[0])
			}
		})
	}
}

// A warm process that dies before a client comes ends its session: the
// pool that made it makes another.
func TestPrestartedProcessDyingBeforeAClientEndsTheSession(t *testing.T) {
	p := prestart(t, testPolicy(exampleCommand(t)))
	syscall.Kill(p.s.Status().Pid, syscall.SIGKILL)
	select {
	case <-p.s.Done():
	case <-time.After(waitLimit):
		t.Fatal("the session did not end after its warm process was killed")
	}
	out, err := p.s.Wait()
	if err != nil || !out.Failed || !strings.Contains(out.Reason, "before a client attached") {
		t.Fatalf("outcome %+v, err %v; want a failure that says the warm process ended before a client attached", out, err)
	}
	if err := p.s.Attach(strings.NewReader(""), io.Discard); err == nil {
		t.Fatal("Attach to an ended session succeeded")
	}
}

// A session that was started for a host cannot be attached to again.
func TestAttachIsForPrestartedSessionsOnly(t *testing.T) {
	p := prestart(t, testPolicy(exampleCommand(t)))
	p.attach(t)
	if err := p.s.Attach(strings.NewReader(""), io.Discard); err == nil {
		t.Fatal("a second Attach succeeded")
	}
}

// startSession is supervisor.Start wired to the test as its host, as
// startRelay wires Run.
func startSession(t *testing.T, pol policy.Policy) (*supervisor.Session, *relay) {
	t.Helper()
	requireConfinement(t)
	hostInR, hostInW := io.Pipe()
	hostOutR, hostOutW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	r := &relay{t: t, toRelay: hostInW, fromRly: hostOutR, events: make(chan supervisor.Event, 256), outcome: make(chan supervisor.Outcome, 1), logs: &syncBuffer{}, cancel: cancel}
	s, err := supervisor.Start(ctx, supervisor.Options{
		Name: "test", Policy: pol, HostIn: hostInR, HostOut: hostOutW, LookupEnv: os.LookupEnv,
		Log:    slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Events: func(e supervisor.Event) { r.events <- e },
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() {
		out, _ := s.Wait()
		hostOutW.Close()
		hostInR.Close()
		r.outcome <- out
	}()
	t.Cleanup(func() {
		cancel()
		hostInW.Close()
		hostOutR.Close()
		s.Wait()
		if t.Failed() {
			t.Logf("supervisor log:\n%s", r.logs)
		}
	})
	return s, r
}

// Restart replaces the process under the host's session, invisibly: the
// session goes on with a new process, even under --restart never, and it
// brings back a server that was down for good.
func TestRestartReplacesTheProcessUnderTheSession(t *testing.T) {
	pol := testPolicy(exampleCommand(t))
	pol.Restart = policy.RestartNever
	s, r := startSession(t, pol)
	cs := r.sdkClient("2025-11-25", nil)
	defer cs.Close()
	first := mustCallTool(t, cs, "instance", nil)
	if err := s.Restart("asked by the test"); err != nil {
		t.Fatal(err)
	}
	r.waitEvent(supervisor.EventReady)
	second := mustCallTool(t, cs, "instance", nil)
	if second == first {
		t.Fatalf("the same process (%s) answered after Restart", first)
	}
	if st := s.Status(); st.Restarts != 1 || st.State != "running" || st.Generation != 2 || !strings.Contains(st.LastExit, "asked by the test") {
		t.Fatalf("status after Restart: %+v; want running generation 2, one restart, the reason as last exit", st)
	}

	// Down for good under --restart never; Restart brings it back.
	callTool(t, cs, "crash", map[string]any{"code": 3})
	r.waitEvent(supervisor.EventStopped)
	if st := s.Status(); st.State != "stopped" || !strings.Contains(st.LastExit, "never") {
		t.Fatalf("status after a crash under --restart never: %+v", st)
	}
	if err := s.Restart(""); err != nil {
		t.Fatal(err)
	}
	r.waitEvent(supervisor.EventReady)
	if got := mustCallTool(t, cs, "echo", map[string]any{"text": "back"}); got != "back" {
		t.Fatalf("echo after the restart of a stopped server: %q", got)
	}
}

// Status reports the heartbeat's round trip and the cgroup's figures.
func TestStatusReportsHeartbeatAndResources(t *testing.T) {
	pol := testPolicy(exampleCommand(t))
	pol.PingInterval = 20 * time.Millisecond
	p := prestart(t, pol)
	p.logs.waitFor(t, "heartbeat answered")
	st := p.s.Status()
	if st.PingRTT <= 0 || st.PingRTT > pol.PingTimeout {
		t.Fatalf("PingRTT %s, want the answered ping's round trip (0 < rtt <= %s)", st.PingRTT, pol.PingTimeout)
	}
	if st.Memory == 0 || st.Pids == 0 || st.Started.IsZero() {
		t.Fatalf("status %+v: want the server cgroup's memory and pids and its start time", st)
	}
}

// A requested restart waits for the answers to what is in flight (within
// --grace) before it stops the process: the host sees no error, and what
// it sends meanwhile is held for the new process.
func TestRestartAnswersWhatIsInFlightFirst(t *testing.T) {
	pol := testPolicy(exampleCommand(t))
	pol.Grace = 5 * time.Second
	s, r := startSession(t, pol)
	h := r.rawHost()
	h.initialize("2025-11-25")
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":300}}}`)
	h.call(`3`, "tools/call", `{"name":"echo","arguments":{"text":"x"}}`) // answered: so 2 is at the server
	if err := s.Restart("asked by the test"); err != nil {
		t.Fatal(err)
	}
	h.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"instance","arguments":{}}}`)
	if res := h.response(`2`); res["result"] == nil {
		t.Errorf("the call in flight at the restart: %s, want the server's result", res)
	}
	if res := h.response(`4`); res["result"] == nil {
		t.Errorf("the call sent during the restart: %s, want the new process's result", res)
	}
	r.waitEvent(supervisor.EventReady)
	r.end()
	h.checkOneAnswerEach()
}
