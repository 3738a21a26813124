package supervisor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// A fleet is many supervisor.Run relays in this one process, each with its
// own confined server and its own host pipes, as a daemon holding many
// servers would run them. Unlike relay (harness_test.go) a fleetRelay never
// calls t.Fatal: goroutines drive the relays at once and get errors back.

// fleetWait bounds each wait on a fleet: fifty confined starts share the
// machine's cores, so the bound is wider than waitLimit. Nothing sleeps.
var fleetWait = testenv.Wait(2 * time.Minute)

// fleetPolicy is the default policy as users run it (heartbeat on), with
// the harness's quick restarts.
func fleetPolicy(t testing.TB) policy.Policy {
	pol := testPolicy(exampleCommand(t))
	def := policy.Default()
	pol.PingInterval, pol.PingTimeout, pol.PingFailures = def.PingInterval, def.PingTimeout, def.PingFailures
	return pol
}

// fleetOuterLimit confines this test process and all n servers to an outer
// cgroup: the servers' own limits (1 GiB each by default) add up to more
// than the machine, so a sandbox bug must hit this one first.
func fleetOuterLimit(t testing.TB, n int) {
	t.Helper()
	testenv.OuterLimit(t, int64(n)*64<<20+1<<30, int64(n)*64+1024)
}

type fleetRelay struct {
	index  int
	name   string
	hostW  *os.File // the host's end of the relay's stdin
	hostR  *os.File // the host's end of the relay's stdout
	wire   *wireCounts
	events *eventLog
	logs   *syncBuffer
	cancel context.CancelFunc
	ended  chan struct{} // closed once Run returned, with its result in out, err
	out    supervisor.Outcome
	err    error
	cs     *mcp.ClientSession // set by connect

	// What the host learnt of its server: generation 1 and, after a
	// restart, generation 2.
	pid, pid2           int
	instance, instance2 string
}

// current is the instance id of the server the host last saw.
func (r *fleetRelay) current() string {
	if r.instance2 != "" {
		return r.instance2
	}
	return r.instance
}

// startFleetRelay starts supervisor.Run with its own pipes; the host side
// is attached by connect (SDK client) or used raw.
func startFleetRelay(index int, pol policy.Policy) (*fleetRelay, error) {
	relayIn, hostW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	hostR, relayOut, err := os.Pipe()
	if err != nil {
		relayIn.Close()
		hostW.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &fleetRelay{
		index: index, name: fmt.Sprintf("fleet-%02d", index), // -1: warm-up
		hostW: hostW, hostR: hostR,
		wire: newWireCounts(), events: &eventLog{}, logs: &syncBuffer{},
		ended: make(chan struct{}), cancel: cancel,
	}
	go func() {
		out, err := supervisor.Run(ctx, supervisor.Options{
			Name: r.name, Policy: pol, HostIn: relayIn, HostOut: relayOut,
			Log:    slog.New(slog.NewTextHandler(r.logs, nil)),
			Events: r.events.add,
		})
		relayOut.Close()
		relayIn.Close()
		r.out, r.err = out, err
		close(r.ended)
	}()
	return r, nil
}

// connect attaches an official Go SDK client to the relay's pipes, through
// taps that count each request id sent and each response id received.
func (r *fleetRelay) connect() error {
	c := mcp.NewClient(&mcp.Implementation{Name: "fleet-host-" + r.name, Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), fleetWait)
	defer cancel()
	t := &mcp.IOTransport{Reader: &readTap{f: r.hostR, w: r.wire}, Writer: &writeTap{f: r.hostW, w: r.wire}}
	cs, err := c.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	r.cs = cs
	return nil
}

// call makes a tools/call and returns its text, or the error the host saw.
func (r *fleetRelay) call(name string, args map[string]any) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), fleetWait)
	defer cancel()
	if args == nil {
		args = map[string]any{}
	}
	res, err := r.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("tools/call %s: %w", name, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return "", fmt.Errorf("tools/call %s: tool error %q", name, text.String())
	}
	return text.String(), nil
}

// echo calls echo with a text naming this relay and the call, and checks
// the answer is that text: an answer meant for another host would not be.
func (r *fleetRelay) echo(seq int) error {
	want := fmt.Sprintf("%s call %d", r.name, seq)
	got, err := r.call("echo", map[string]any{"text": want})
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("echo %q answered %q", want, got)
	}
	return nil
}

// shutdown leaves as a host does (closing its pipes) and waits for Run.
func (r *fleetRelay) shutdown() (supervisor.Outcome, error) {
	if r.cs != nil {
		r.cs.Close()
	}
	r.hostW.Close()
	defer r.hostR.Close()
	defer r.cancel()
	select {
	case <-r.ended:
		if r.err != nil {
			return r.out, fmt.Errorf("supervisor.Run: %w", r.err)
		}
		return r.out, nil
	case <-time.After(fleetWait):
		return supervisor.Outcome{}, fmt.Errorf("supervisor.Run did not return within %s of the host leaving", fleetWait)
	}
}

// abandon ends the relay however far the test got, and waits for Run.
func (r *fleetRelay) abandon() {
	r.cancel()
	if r.cs != nil {
		r.cs.Close()
	}
	r.hostW.Close()
	r.hostR.Close()
	select {
	case <-r.ended:
	case <-time.After(fleetWait):
	}
}

// warmFleet runs one relay through a call and its end, so that what the
// process sets up once (code paged in, the fork thread) is paid before the
// fleet's baseline, and waits for its goroutines to end. It returns the
// baseline.
func warmFleet(t testing.TB, pol policy.Policy) footprint {
	t.Helper()
	pre := measureFootprint(t)
	r, err := startFleetRelay(-1, pol)
	if err != nil {
		t.Fatal(err)
	}
	defer r.abandon()
	if err := r.connect(); err != nil {
		t.Fatalf("warm-up relay: %v\nlog:\n%s", err, r.logs.String())
	}
	if err := r.echo(0); err != nil {
		t.Fatalf("warm-up relay: %v\nlog:\n%s", err, r.logs.String())
	}
	if _, err := r.shutdown(); err != nil {
		t.Fatalf("warm-up relay: %v", err)
	}
	if left, _ := awaitGoroutinesBack(pre, 3); left != nil {
		t.Fatalf("the warm-up relay's goroutines still run after its Run returned:\n%s", strings.Join(left, "\n\n"))
	}
	return measureFootprint(t)
}

// eachRelay runs f on every relay at once and returns the errors by relay
// index (nil where f succeeded).
func eachRelay(rs []*fleetRelay, f func(*fleetRelay) error) []error {
	errs := make([]error, len(rs))
	var wg sync.WaitGroup
	for i, r := range rs {
		wg.Go(func() { errs[i] = f(r) })
	}
	wg.Wait()
	return errs
}

// reportErrors fails t with each relay's error and its log; it says
// whether there were any.
func reportErrors(t testing.TB, rs []*fleetRelay, what string, errs []error) bool {
	t.Helper()
	failed := false
	for i, err := range errs {
		if err != nil {
			failed = true
			t.Errorf("%s: %s: %v\n%s log:\n%s", what, rs[i].name, err, rs[i].name, rs[i].logs.String())
		}
	}
	return failed
}

// changes lets goroutines wait, with a deadline, for state guarded by mu
// to change; whoever changes it calls changed with mu held.
type changes struct {
	mu sync.Mutex
	ch chan struct{}
}

func (c *changes) changed() {
	if c.ch != nil {
		close(c.ch)
		c.ch = nil
	}
}

// await returns once cond (run with mu held) holds, false at the deadline.
func (c *changes) await(deadline <-chan time.Time, cond func() bool) bool {
	for {
		c.mu.Lock()
		ok := cond()
		if c.ch == nil {
			c.ch = make(chan struct{})
		}
		ch := c.ch
		c.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-deadline:
			return false
		}
	}
}

// eventLog keeps every lifecycle event of one relay, in order.
type eventLog struct {
	changes
	list []supervisor.Event
}

func (l *eventLog) add(e supervisor.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list = append(l.list, e)
	l.changed()
}

// waitFor returns the first event of kind and generation.
func (l *eventLog) waitFor(kind supervisor.EventKind, gen int) (supervisor.Event, error) {
	var found supervisor.Event
	ok := l.await(time.After(fleetWait), func() bool {
		for _, e := range l.list {
			if e.Kind == kind && e.Generation == gen {
				found = e
				return true
			}
		}
		return false
	})
	if !ok {
		return found, fmt.Errorf("no %s event of generation %d within %s (events: %v)", kind, gen, fleetWait, l.all())
	}
	return found, nil
}

func (l *eventLog) all() []supervisor.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]supervisor.Event(nil), l.list...)
}

// wireCounts counts, per raw JSON-RPC id, the requests a host sent and the
// responses it received, and the tools/call requests sent by tool name.
type wireCounts struct {
	changes
	sent, answered map[string]int
	toolCalls      map[string]int
}

func newWireCounts() *wireCounts {
	return &wireCounts{sent: map[string]int{}, answered: map[string]int{}, toolCalls: map[string]int{}}
}

func (w *wireCounts) line(line []byte, fromHost bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range jsonRPCMessages(line) {
		switch id, isRequest := string(m["id"]), m["method"] != nil; {
		case fromHost && isRequest && id != "":
			w.sent[id]++
			if string(m["method"]) == `"tools/call"` {
				var p struct{ Name string }
				json.Unmarshal(m["params"], &p)
				w.toolCalls[p.Name]++
			}
		case !fromHost && !isRequest && id != "":
			w.answered[id]++
		}
	}
	w.changed()
}

// waitToolCallSent waits until the host has written a tools/call of name.
func (w *wireCounts) waitToolCallSent(name string) error {
	if !w.await(time.After(fleetWait), func() bool { return w.toolCalls[name] > 0 }) {
		return fmt.Errorf("the host never sent tools/call %s", name)
	}
	return nil
}

// oneAnswerEach reports requests answered never or more than once and
// responses to ids never sent (testenv.CheckOneAnswerEach, as an error).
func (w *wireCounts) oneAnswerEach() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.sent) == 0 {
		return errors.New("no host request was recorded")
	}
	var bad []string
	for id, n := range w.sent {
		if n != 1 || w.answered[id] != 1 {
			bad = append(bad, fmt.Sprintf("id %s sent %d times, answered %d times", id, n, w.answered[id]))
		}
	}
	for id := range w.answered {
		if w.sent[id] == 0 {
			bad = append(bad, fmt.Sprintf("response to id %s, never sent", id))
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}

// lineSplitter hands each complete line of a byte stream to a wireCounts.
type lineSplitter struct {
	buf []byte
}

func (s *lineSplitter) feed(p []byte, each func([]byte)) {
	s.buf = append(s.buf, p...)
	for {
		i := bytes.IndexByte(s.buf, '\n')
		if i < 0 {
			return
		}
		each(s.buf[:i])
		s.buf = s.buf[i+1:]
	}
}

// readTap is the host's read end; it counts what the host receives.
type readTap struct {
	f *os.File
	w *wireCounts
	s lineSplitter
}

func (r *readTap) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	r.s.feed(p[:n], func(l []byte) { r.w.line(l, false) })
	return n, err
}

func (r *readTap) Close() error { return r.f.Close() }

// writeTap is the host's write end; it counts what the host sends, before
// sending it, so no response is seen before its request.
type writeTap struct {
	f *os.File
	w *wireCounts
	s lineSplitter
}

func (w *writeTap) Write(p []byte) (int, error) {
	w.s.feed(p, func(l []byte) { w.w.line(l, true) })
	return w.f.Write(p)
}

func (w *writeTap) Close() error { return w.f.Close() }

// footprint is what this process holds: RSS after a full GC that returned
// what it could to the OS, and goroutines, by who runs them.
type footprint struct {
	rssKiB     int64
	heapKiB    int64 // Go heap in use, after the GC: what RSS is mostly made of
	stackKiB   int64 // goroutine stacks
	goroutines int
	relay      int // running mcpsandbox code (supervisor, sandbox, healthcheck, ...)
	host       int // the test's hosts: the Go SDK client and this package's taps
}

func measureFootprint(t testing.TB) footprint {
	t.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	f := footprint{rssKiB: rssKiB(t), heapKiB: int64(ms.HeapInuse >> 10), stackKiB: int64(ms.StackInuse >> 10)}
	for _, g := range goroutineStacks() {
		f.goroutines++
		switch {
		case isRelayStack(g):
			f.relay++
		case strings.Contains(g, "modelcontextprotocol/go-sdk") || strings.Contains(g, testPackage):
			f.host++
		}
	}
	return f
}

const (
	module      = "github.com/mcpsandbox/mcpsandbox/"
	testPackage = module + "supervisor_test."
)

// processWide are goroutines mcpsandbox keeps for the life of the process
// by design: the sandbox forks every server from one locked thread
// (sandbox/internal/initstage/forkthread.go). Any other goroutine running
// mcpsandbox code belongs to a relay and must end with it.
var processWide = []string{"initstage.onForkThread"}

func isRelayStack(g string) bool {
	for _, p := range processWide {
		if strings.Contains(g, p) {
			return false
		}
	}
	return strings.Contains(strings.ReplaceAll(g, testPackage, ""), module)
}

// goroutineStacks is every goroutine's stack (created-by line included).
func goroutineStacks() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Split(strings.TrimSpace(string(buf[:n])), "\n\n")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// rssKiB is this process's resident set (VmRSS).
func rssKiB(t testing.TB) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS %q: %v", v, err)
			}
			return n
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// awaitGoroutinesBack waits until the relays' goroutines are gone and the
// total is back to base's, allowing slack for what the runtime and the
// testing package start on their own; it returns the stacks left over.
func awaitGoroutinesBack(base footprint, slack int) (relayLeft []string, total int) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(fleetWait)
	for {
		stacks := goroutineStacks()
		relayLeft = relayLeft[:0]
		for _, g := range stacks {
			if isRelayStack(g) {
				relayLeft = append(relayLeft, g)
			}
		}
		if len(relayLeft) <= base.relay && len(stacks) <= base.goroutines+slack {
			return nil, len(stacks)
		}
		select {
		case <-tick.C: // goroutines end on their own after Run returns: poll
		case <-deadline:
			return relayLeft, len(stacks)
		}
	}
}
