package supervisor_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// Nothing in the relay or the sandbox is process-global: fifty relays in
// one process, each with its own confined server and its own Go SDK host,
// all come up; crashing every fifth server restarts that one alone, while
// the other relays, kept busy meanwhile, see no event, keep their server
// process and answer every call, each with its own server's answer.
// The relays' RSS and goroutines are logged; BenchmarkRelays50 tracks them.
func TestManyRelaysCrashSomeOthersUntouched(t *testing.T) {
	const n, crashEvery = 50, 5
	requireConfinement(t)
	fleetOuterLimit(t, n)
	pol := fleetPolicy(t)
	base := warmFleet(t, pol)

	begin := time.Now()
	rs := startFleet(t, n, pol)
	errs := eachRelay(rs, func(r *fleetRelay) error {
		if err := r.connect(); err != nil {
			return err
		}
		started, err := r.events.waitFor(supervisor.EventStarted, 1)
		if err != nil {
			return err
		}
		r.pid = started.Pid
		if r.instance, err = r.call("instance", nil); err != nil {
			return err
		}
		return r.echo(0)
	})
	if reportErrors(t, rs, "start", errs) {
		t.FailNow()
	}
	t.Logf("%d confined relays started, initialized and answered a call in %s", n, time.Since(begin).Round(time.Millisecond))
	checkDistinctServers(t, rs, func(r *fleetRelay) string { return r.instance })
	checkOwnConfinement(t, rs)

	idle := measureFootprint(t)
	logFootprint(t, "idle", base, idle, n)

	// Crash every fifth server with a call in flight while the others keep
	// calling, until each crashed one answers again.
	crashed := func(r *fleetRelay) bool { return r.index%crashEvery == 0 }
	recovered := make(chan struct{})
	var pending atomic.Int32
	pending.Store(int32((n + crashEvery - 1) / crashEvery))
	var busyCalls atomic.Int64
	begin = time.Now()
	errs = eachRelay(rs, func(r *fleetRelay) error {
		if !crashed(r) {
			return keepBusy(r, recovered, &busyCalls)
		}
		defer func() {
			if pending.Add(-1) == 0 {
				close(recovered)
			}
		}()
		return crashAndRecover(r)
	})
	reportErrors(t, rs, "crash phase", errs)
	t.Logf("%d servers crashed and recovered in %s while %d other relays answered %d calls",
		(n+crashEvery-1)/crashEvery, time.Since(begin).Round(time.Millisecond), n-(n+crashEvery-1)/crashEvery, busyCalls.Load())

	for _, r := range rs {
		want := []string{fmt.Sprintf("started 1 pid %d", r.pid)}
		if crashed(r) {
			want = append(want, "exited 1", fmt.Sprintf("started 2 pid %d", r.pid2), "ready 2")
		}
		if got := eventSummary(r.events.all()); strings.Join(got, ", ") != strings.Join(want, ", ") {
			t.Errorf("%s: events %q, want %q", r.name, got, want)
		}
	}
	// Each server still is the one its host last saw, and no two alike.
	errs = eachRelay(rs, func(r *fleetRelay) error {
		got, err := r.call("instance", nil)
		if err != nil {
			return err
		}
		if want := r.current(); got != want {
			return fmt.Errorf("the server is instance %s now, want %s (restarted by another relay's crash, or another's server)", got, want)
		}
		return nil
	})
	reportErrors(t, rs, "after the crashes", errs)
	checkDistinctServers(t, rs, (*fleetRelay).current)

	// Every host leaves; every Run returns, and took nothing with it.
	errs = eachRelay(rs, func(r *fleetRelay) error {
		out, err := r.shutdown()
		if err != nil {
			return err
		}
		if want := map[bool]int{true: 1, false: 0}[crashed(r)]; out.Restarts != want {
			return fmt.Errorf("outcome %+v, want %d restarts", out, want)
		}
		return r.wire.oneAnswerEach()
	})
	reportErrors(t, rs, "shutdown", errs)
	left, total := awaitGoroutinesBack(base, 3)
	if len(left) > 0 {
		t.Errorf("%d relay goroutines still run after every supervisor.Run returned:\n%s", len(left), strings.Join(left, "\n\n"))
	}
	after := measureFootprint(t)
	t.Logf("after shutdown: %d goroutines (%d before the relays), RSS %d KiB (%d KiB before)", total, base.goroutines, after.rssKiB, base.rssKiB)
}

// startFleet starts n relays (their servers start at once, concurrently)
// and ends them all at cleanup, should the test stop early.
func startFleet(t testing.TB, n int, pol policy.Policy) []*fleetRelay {
	t.Helper()
	rs := make([]*fleetRelay, 0, n)
	t.Cleanup(func() {
		for _, r := range rs {
			r.abandon()
		}
	})
	for i := range n {
		r, err := startFleetRelay(i, pol)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rs
}

// crashAndRecover crashes r's server by a call while another call is in
// flight: both get the crash error, once; the relay restarts the server
// and the next call is answered by the new process.
func crashAndRecover(r *fleetRelay) error {
	code := 100 + r.index // each server exits with its own status
	inFlight := make(chan error, 1)
	go func() {
		_, err := r.call("sleep", map[string]any{"ms": 600_000})
		inFlight <- err
	}()
	if err := r.wire.waitToolCallSent("sleep"); err != nil {
		return err
	}
	_, err := r.call("crash", map[string]any{"code": code})
	if err := wantCrashed("the crash call", err, code); err != nil {
		return err
	}
	select {
	case err := <-inFlight:
		if err := wantCrashed("the call in flight", err, code); err != nil {
			return err
		}
	case <-time.After(fleetWait):
		return fmt.Errorf("the call in flight got no answer within %s of the crash", fleetWait)
	}
	exited, err := r.events.waitFor(supervisor.EventExited, 1)
	if err != nil {
		return err
	}
	if want := fmt.Sprintf("exited with status %d", code); exited.Reason != want {
		return fmt.Errorf("exit reason %q, want %q (another server's exit?)", exited.Reason, want)
	}
	started, err := r.events.waitFor(supervisor.EventStarted, 2)
	if err != nil {
		return err
	}
	r.pid2 = started.Pid
	if _, err := r.events.waitFor(supervisor.EventReady, 2); err != nil {
		return err
	}
	if r.instance2, err = r.call("instance", nil); err != nil {
		return fmt.Errorf("after the restart: %w", err)
	}
	if r.instance2 == r.instance {
		return fmt.Errorf("instance %s unchanged after the restart", r.instance)
	}
	return r.echo(1)
}

// wantCrashed checks that err is the crash error naming this server's exit.
func wantCrashed(what string, err error, code int) error {
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != supervisor.CodeServerCrashed {
		return fmt.Errorf("%s: %v, want JSON-RPC error %d", what, err, supervisor.CodeServerCrashed)
	}
	var data struct{ Reason string }
	json.Unmarshal(werr.Data, &data)
	if want := fmt.Sprintf("exited with status %d", code); data.Reason != want {
		return fmt.Errorf("%s: crash error reason %q, want %q", what, data.Reason, want)
	}
	return nil
}

// keepBusy calls r's server until done, checking each answer is its own
// and its server the one it started with.
func keepBusy(r *fleetRelay, done <-chan struct{}, calls *atomic.Int64) error {
	for seq := 1; ; seq++ {
		if err := r.echo(seq); err != nil {
			return err
		}
		calls.Add(1)
		if seq%4 == 0 {
			got, err := r.call("instance", nil)
			if err != nil {
				return err
			}
			calls.Add(1)
			if got != r.instance {
				return fmt.Errorf("call %d: server instance %s, want %s", seq, got, r.instance)
			}
		}
		select {
		case <-done:
			return nil
		default:
		}
	}
}

// checkDistinctServers fails t if two relays' hosts got the same server
// instance: one host would be talking to another's server.
func checkDistinctServers(t *testing.T, rs []*fleetRelay, instance func(*fleetRelay) string) {
	t.Helper()
	seen := map[string]string{}
	pids := map[int]string{}
	for _, r := range rs {
		id := instance(r)
		if other, dup := seen[id]; dup {
			t.Errorf("%s and %s were both answered by server instance %s", other, r.name, id)
		}
		seen[id] = r.name
		if other, dup := pids[r.pid]; dup {
			t.Errorf("%s and %s both report server pid %d", other, r.name, r.pid)
		}
		pids[r.pid] = r.name
	}
}

// checkOwnConfinement fails t unless each server runs in a pid namespace
// and cgroups of its own.
func checkOwnConfinement(t *testing.T, rs []*fleetRelay) {
	t.Helper()
	pidNS, cgroups := map[string]string{}, map[string]string{}
	for _, r := range rs {
		ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", r.pid))
		if err != nil {
			t.Errorf("%s: server pid %d: %v", r.name, r.pid, err)
			continue
		}
		cg, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", r.pid))
		if err != nil {
			t.Errorf("%s: server pid %d: %v", r.name, r.pid, err)
			continue
		}
		if other, dup := pidNS[ns]; dup {
			t.Errorf("the servers of %s and %s share pid namespace %s", other, r.name, ns)
		}
		pidNS[ns] = r.name
		if other, dup := cgroups[string(cg)]; dup {
			t.Errorf("the servers of %s and %s share their cgroups:\n%s", other, r.name, cg)
		}
		cgroups[string(cg)] = r.name
	}
}

func eventSummary(es []supervisor.Event) []string {
	var s []string
	for _, e := range es {
		switch e.Kind {
		case supervisor.EventStarted:
			s = append(s, fmt.Sprintf("started %d pid %d", e.Generation, e.Pid))
		default:
			s = append(s, fmt.Sprintf("%s %d", e.Kind, e.Generation))
		}
	}
	return s
}

// logFootprint logs what n relays cost this process, per relay.
func logFootprint(t testing.TB, when string, base, now footprint, n int) {
	t.Helper()
	per := func(a, b int) float64 { return float64(b-a) / float64(n) }
	kib := func(a, b int64) float64 { return float64(b-a) / float64(n) }
	t.Logf("%s, %d relays with their SDK hosts: RSS %d → %d KiB, per relay (host included) %.0f KiB RSS, %.0f KiB Go heap, %.0f KiB stacks; goroutines %d → %d: %.1f per relay, of which %.1f relay code, %.1f the host",
		when, n, base.rssKiB, now.rssKiB, kib(base.rssKiB, now.rssKiB), kib(base.heapKiB, now.heapKiB), kib(base.stackKiB, now.stackKiB),
		base.goroutines, now.goroutines, per(base.goroutines, now.goroutines), per(base.relay, now.relay), per(base.host, now.host))
}
