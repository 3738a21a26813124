package supervisor

import (
	"time"

	"github.com/mcpsandbox/mcpsandbox/egress"
	"github.com/mcpsandbox/mcpsandbox/supervisor/pins"
)

// Status is a snapshot of a session, for a daemon's status view.
type Status struct {
	// State is "starting" (no process has answered yet), "warm"
	// (prestarted, ready, no host yet), "running", "restarting",
	// "stopped" (down for good) or "closing".
	State      string
	Generation int       // current server process, from 1; 0 before the first start
	Pid        int       // its pid; 0 when none runs
	Started    time.Time // when the current process started; zero when none runs
	Restarts   int
	PingRTT    time.Duration // the last answered heartbeat's round trip; 0 before any
	Memory     uint64        // bytes charged to the server's cgroup; 0 when unknown
	Pids       uint64        // processes in it; 0 when unknown
	// LastExit says why the last process ended ("" before any did); while
	// the server is down for good, why it stays down.
	LastExit string
	// Denied are the hosts the server tried, this session, that its
	// policy does not allow, each with the --allow-host that allows it
	// (the first egress.MaxDeniedHosts; attempts at others are counted).
	Denied egress.Denied
	// Held are the items the lock holds for approval, this session.
	Held []pins.Held
}

// Status reports where the session stands now.
func (s *Session) Status() Status {
	r := s.r
	r.mu.Lock()
	st := Status{Restarts: r.nRestarts, LastExit: r.lastExit, Denied: r.deniedSince(0)}
	g, state := r.gen, r.state
	if state == stateStopped && r.stopReason != "" {
		st.LastExit = r.stopReason
	}
	r.mu.Unlock()
	if s.pins != nil {
		st.Held = s.pins.Held()
	}
	select {
	case <-s.done:
		state = stateClosing
	default:
	}
	switch {
	case g == nil && state != stateStopped:
		st.State = "starting"
	case r.warm.Load():
		st.State = "warm"
	case state == stateRunning && !r.hosted.Load():
		st.State = "starting"
	default:
		st.State = stateNames[state]
	}
	if g != nil && !g.retired.Load() && state != stateClosing {
		st.Generation, st.Pid, st.Started = g.n, g.proc.Pid(), g.started
		if c := g.probe(); c != nil {
			st.PingRTT = c.LastRTT()
		}
		stats := g.proc.Stats()
		st.Memory, st.Pids = stats.MemoryBytes, stats.Pids
	}
	return st
}

var stateNames = [...]string{
	stateRunning:    "running",
	stateRestarting: "restarting",
	stateStopped:    "stopped",
	stateClosing:    "closing",
}
