package healthcheck

import (
	"strings"
	"testing"
	"time"
)

type probe struct{ id, method string }

// harness wires a checker to a channel of sent probes.
func harness(t *testing.T, failures int, fallback string) (*Checker, chan probe) {
	t.Helper()
	sent := make(chan probe, 16)
	c := New(Options{
		Interval: time.Millisecond,
		Timeout:  20 * time.Millisecond,
		Failures: failures,
		IDPrefix: "mcpsandbox:ping:1:",
		Send:     func(id, method string) { sent <- probe{id, method} },
		Fallback: fallback,
	})
	t.Cleanup(c.Stop)
	return c, sent
}

func next(t *testing.T, sent chan probe) probe {
	t.Helper()
	select {
	case p := <-sent:
		return p
	case <-time.After(5 * time.Second):
		t.Fatal("no probe sent")
	}
	return probe{}
}

func TestAnsweredProbesKeepServerAlive(t *testing.T) {
	c, sent := harness(t, 1, "")
	c.Start()
	for range 5 {
		p := next(t, sent)
		if p.method != "ping" || !strings.HasPrefix(p.id, "mcpsandbox:ping:1:") {
			t.Fatalf("probe %+v: want a ping with the id prefix", p)
		}
		c.Answer(p.id, false, 0)
	}
	select {
	case <-c.Dead():
		t.Fatalf("declared dead although every probe was answered: %s", c.Reason())
	default:
	}
}

func TestMissedProbesDeclareDeadAfterFailuresInARow(t *testing.T) {
	c, sent := harness(t, 3, "")
	c.Start()
	// One miss, then an answer: the count starts over.
	next(t, sent)
	p := next(t, sent)
	c.Answer(p.id, false, 0)
	for range 2 {
		next(t, sent)
	}
	select {
	case <-c.Dead():
		t.Fatal("dead after 2 misses in a row with a limit of 3")
	default:
	}
	next(t, sent)
	select {
	case <-c.Dead():
	case <-time.After(5 * time.Second):
		t.Fatal("not declared dead after 3 misses in a row")
	}
	if r := c.Reason(); !strings.Contains(r, "hang") || !strings.Contains(r, "3 ping") {
		t.Errorf("reason %q should say hang and how many pings", r)
	}
}

func TestLateAnswerDoesNotCount(t *testing.T) {
	c, sent := harness(t, 2, "")
	c.Start()
	first := next(t, sent)
	second := next(t, sent) // the first timed out
	c.Answer(first.id, false, 0)
	_ = second
	select {
	case <-c.Dead():
	case <-time.After(5 * time.Second):
		t.Fatal("a late answer to an earlier probe kept the server alive")
	}
}

func TestMethodNotFoundSwitchesToFallback(t *testing.T) {
	c, sent := harness(t, 1, "server/discover")
	c.Start()
	p := next(t, sent)
	c.Answer(p.id, true, codeMethodNotFound)
	p = next(t, sent)
	if p.method != "server/discover" {
		t.Fatalf("after -32601 the probe is %q, want the fallback server/discover", p.method)
	}
	c.Answer(p.id, false, 0)
	next(t, sent)
}

func TestMethodNotFoundWithoutFallbackStopsProbing(t *testing.T) {
	c, sent := harness(t, 1, "")
	c.Start()
	p := next(t, sent)
	c.Answer(p.id, true, codeMethodNotFound)
	select {
	case p := <-sent:
		t.Fatalf("probe %+v sent after the server said it has no ping and no fallback exists", p)
	case <-c.Dead():
		t.Fatal("declared dead after an answer")
	case <-time.After(100 * time.Millisecond):
		// Nothing: probing stopped. (A bounded wait for an absence.)
	}
}

func TestOtherErrorsStillProveLiveness(t *testing.T) {
	c, sent := harness(t, 1, "")
	c.Start()
	for range 3 {
		p := next(t, sent)
		c.Answer(p.id, true, -32603)
	}
	select {
	case <-c.Dead():
		t.Fatal("an error answer is still an answer")
	default:
	}
}

func TestExcusedMissesDoNotCount(t *testing.T) {
	sent := make(chan probe, 16)
	excused := make(chan bool, 1)
	excused <- true
	c := New(Options{
		Interval: time.Millisecond,
		Timeout:  10 * time.Millisecond,
		Failures: 1,
		IDPrefix: "p:",
		Send:     func(id, method string) { sent <- probe{id, method} },
		Excused: func() bool {
			select {
			case e := <-excused:
				return e
			default:
				return false
			}
		},
	})
	defer c.Stop()
	c.Start()
	next(t, sent) // missed, but excused
	next(t, sent) // a second probe proves the checker carried on
	select {
	case <-c.Dead():
	case <-time.After(5 * time.Second):
		t.Fatal("an unexcused miss did not count")
	}
}

// LastRTT is how long the last answered probe took to come back.
func TestLastRTTIsTheAnsweredProbesRoundTrip(t *testing.T) {
	sent := make(chan probe, 16)
	c := New(Options{
		Interval: time.Millisecond,
		Timeout:  5 * time.Second,
		Failures: 1,
		IDPrefix: "p:",
		Send:     func(id, method string) { sent <- probe{id, method} },
	})
	t.Cleanup(c.Stop)
	if c.LastRTT() != 0 {
		t.Fatalf("LastRTT before any probe = %s, want 0", c.LastRTT())
	}
	c.Start()
	p := next(t, sent)
	const delay = 30 * time.Millisecond
	time.Sleep(delay) // the server's think time being measured, not a synchronisation
	c.Answer(p.id, false, 0)
	next(t, sent) // the next probe goes out after the answer was taken
	if rtt := c.LastRTT(); rtt < delay || rtt >= 5*time.Second {
		t.Fatalf("LastRTT = %s, want at least the %s the answer took", rtt, delay)
	}
}
