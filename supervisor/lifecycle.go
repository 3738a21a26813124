package supervisor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// newTimer exists so that tests of timing logic have one place to look.
func newTimer(d time.Duration) *time.Timer { return time.NewTimer(d) }

// afterExit handles the end of generation g (it exited, or was killed as
// hung): it answers what g left in flight, then restarts the server and
// replays the session, or stops for good. It returns done=true when the
// session is over.
func (s *server) afterExit(ctx context.Context, g *generation, reason string, failed bool) (Outcome, bool) {
	for {
		if g != nil {
			s.retire(g, reason)
		}
		restart, delay, stop, end := s.decide(reason, failed)
		s.answerCrashed(g, reason, restart, stop, end)
		if end {
			s.stopAll()
			reason := "the server exited by itself (" + reason + "); --restart " + s.pol.Restart + " does not restart it"
			s.log.Info("mcpsandbox: session ended", "reason", reason, "exit_code", 0)
			return Outcome{Reason: reason, ExitCode: 0, Restarts: s.restartCount()}, true
		}
		if !restart {
			return Outcome{}, false // stopped: serve waits for the host to leave
		}

		s.log.Info("restarting the server", "in", delay, "after", reason)
		t := newTimer(delay)
		select {
		case <-t.C:
		case <-s.hostGone:
			t.Stop()
			return s.shutdown(nil, "host closed the connection while the server was restarting", false), true
		case <-ctx.Done():
			t.Stop()
			return s.shutdown(nil, "shutdown requested while the server was restarting", true), true
		}

		ng, err := s.startGeneration()
		if err != nil {
			g, reason, failed = nil, "restart failed: "+err.Error(), true
			continue
		}
		s.mu.Lock()
		s.gen = ng
		s.nRestarts++
		s.mu.Unlock()
		init, err := s.replay(ctx, ng)
		switch {
		case errors.Is(err, errHostGone):
			return s.shutdown(ng, "host closed the connection while the server was restarting", false), true
		case ctx.Err() != nil:
			return s.shutdown(ng, "shutdown requested while the server was restarting", true), true
		case errors.Is(err, errDead):
			ex := ng.proc.Exit()
			g, reason, failed = ng, ex.String()+" while its session was replayed", true
			continue
		case err != nil:
			ng.log.Error("session replay failed; killing the new server process", "error", err)
			ng.proc.Kill()
			<-ng.proc.Done()
			g, reason, failed = ng, err.Error(), true
			continue
		}
		s.flush(ng)
		ng.log.Info("server restarted; the host's session continues", "pid", ng.proc.Pid())
		s.emit(Event{Kind: EventReady, Generation: ng.n, Pid: ng.proc.Pid()})
		if init != nil {
			for _, list := range init.listChanged() {
				s.host.write(notification("notifications/"+list+"/list_changed", nil))
			}
		}
		return Outcome{}, false
	}
}

// retire stops writing to g, kills what is left of its process tree, lets
// its last output drain and releases it.
func (s *server) retire(g *generation, reason string) {
	g.stopWriting()
	g.proc.Kill()
	g.drain()
	g.retired.Store(true)
	g.proc.Close()
	uptime := time.Since(g.started).Round(time.Millisecond)
	tail := g.stderr.lastLines(crashTail)
	g.log.Warn("server process ended", "reason", reason, "uptime", uptime, "pid", g.proc.Pid(), "stderr_tail", strings.Join(tail, "\n"))
	s.emit(Event{Kind: EventExited, Generation: g.n, Pid: g.proc.Pid(), Reason: reason})
}

// decide says what follows the end of a server process: a restart after
// delay, a stop for good (with the reason), or the end of the session (a
// clean exit that is not to be restarted).
func (s *server) decide(reason string, failed bool) (restart bool, delay time.Duration, stop string, end bool) {
	switch {
	case !failed && s.pol.Restart != policy.RestartAlways:
		return false, 0, "", true
	case s.pol.Restart == policy.RestartNever:
		stop = "the server " + reason + " and --restart never does not restart it"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if stop == "" {
		now := time.Now()
		recent := s.restarts[:0]
		for _, t := range s.restarts {
			if now.Sub(t) < s.pol.RestartWindow {
				recent = append(recent, t)
			}
		}
		s.restarts = recent
		if s.pol.MaxRestarts > 0 && len(recent) >= s.pol.MaxRestarts {
			stop = fmt.Sprintf("crash loop: the server failed %d times within %s (last: %s); mcpsandbox stopped restarting it (--max-restarts %d, --restart-window %s)",
				len(recent)+1, s.pol.RestartWindow, reason, s.pol.MaxRestarts, s.pol.RestartWindow)
		} else {
			delay = s.pol.RestartBackoff.Min << len(recent)
			if delay > s.pol.RestartBackoff.Max || delay <= 0 {
				delay = s.pol.RestartBackoff.Max
			}
			s.restarts = append(s.restarts, now)
			s.state = stateRestarting
			return true, delay, "", false
		}
	}
	s.state = stateStopped
	s.stopReason = stop
	return false, 0, stop, false
}

// answerCrashed answers every host request g left in flight, once, and
// cancels its pending server→host requests. When the server is down for
// good, queued requests are answered too.
func (s *server) answerCrashed(g *generation, reason string, restart bool, stop string, end bool) {
	gn := 0
	if g != nil {
		gn = g.n
	}
	var answers [][]byte
	s.mu.Lock()
	for k, r := range s.inflight {
		ofDead := g != nil && r.gen == g.n
		queued := r.gen == 0
		if !ofDead && !(queued && !restart) {
			continue // held for the next process
		}
		delete(s.inflight, k)
		if r.cancelled {
			continue
		}
		id := []byte(r.hostID)
		data := errorData{Reason: reason, Generation: r.gen}
		switch {
		case restart:
			answers = append(answers, errorResponse(id, CodeServerCrashed,
				"MCP server process ended while handling the request ("+reason+"); mcpsandbox is restarting it, retry the request", data))
		case end:
			answers = append(answers, errorResponse(id, CodeServerStopped, "MCP server exited ("+reason+")", data))
		default:
			answers = append(answers, errorResponse(id, CodeServerStopped, "MCP server is down: "+stop, data))
		}
	}
	if !restart {
		s.queue, s.queueBytes = nil, 0
	}
	for k, p := range s.pending {
		if p.gen == gn {
			delete(s.pending, k)
			answers = append(answers, notification("notifications/cancelled",
				map[string]any{"requestId": rawJSON(k), "reason": "the MCP server process that sent this request ended (" + reason + ")"}))
		}
	}
	clear(s.pendingOrig)
	s.mu.Unlock()
	for _, a := range answers {
		s.host.write(a)
	}
	if stop != "" {
		var tail []string
		if g != nil {
			tail = g.stderr.lastLines(crashTail)
		}
		s.log.Error("server stopped for good; every request now gets an error until the host disconnects",
			"reason", stop, "code", CodeServerStopped, "stderr_tail", strings.Join(tail, "\n"))
		s.emit(Event{Kind: EventStopped, Generation: gn, Reason: stop})
	}
}

func (s *server) restartCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nRestarts
}

// stopAll makes every later request fail as "shutting down".
func (s *server) stopAll() {
	s.mu.Lock()
	s.state = stateClosing
	s.mu.Unlock()
}

// shutdown ends the session: the server gets EOF on stdin, then after
// --grace SIGTERM, after another --grace SIGKILL, and its whole tree is
// killed. With answerHost (the host is still there), requests left in
// flight are answered.
func (s *server) shutdown(g *generation, reason string, answerHost bool) Outcome {
	s.mu.Lock()
	s.state = stateClosing
	s.queue, s.queueBytes = nil, 0
	failed := s.stopReason != ""
	s.mu.Unlock()
	if g != nil && !g.retired.Load() {
		s.stopProcess(g)
	}
	if answerHost {
		var answers [][]byte
		s.mu.Lock()
		for k, r := range s.inflight {
			delete(s.inflight, k)
			if !r.cancelled {
				answers = append(answers, errorResponse([]byte(r.hostID), CodeServerStopped, "mcpsandbox is shutting down", errorData{Reason: reason}))
			}
		}
		s.mu.Unlock()
		for _, a := range answers {
			s.host.write(a)
		}
	}
	code := 0
	if failed {
		code = 1
		reason += " (the server had stopped: " + s.stopReason + ")"
	}
	s.log.Info("mcpsandbox: session ended", "reason", reason, "exit_code", code)
	return Outcome{Reason: reason, ExitCode: code, Restarts: s.restartCount()}
}

// stopProcess stops g politely, then firmly, and releases it.
func (s *server) stopProcess(g *generation) {
	g.stopWriting()
	g.proc.Stdin().Close()
	steps := []struct {
		what string
		act  func()
	}{
		{"closed its stdin", func() {}},
		{"sent SIGTERM", func() { g.proc.Signal(syscall.SIGTERM) }},
	}
	exited := false
	for _, step := range steps {
		step.act()
		t := newTimer(s.pol.Grace)
		select {
		case <-g.proc.Done():
			exited = true
			t.Stop()
		case <-t.C:
			g.log.Info("server still running after grace period", "step", step.what, "grace", s.pol.Grace)
		}
		if exited {
			break
		}
	}
	if !exited {
		g.log.Warn("server ignored stdin EOF and SIGTERM; killing it")
	}
	g.proc.Kill() // the whole tree, also when the server itself exited
	<-g.proc.Done()
	g.drain()
	g.retired.Store(true)
	g.proc.Close()
	g.log.Info("server process stopped", "exit", g.proc.Exit().String())
}

// rawJSON lets an id token be embedded as-is in a marshalled value.
type rawJSON string

func (r rawJSON) MarshalJSON() ([]byte, error) { return []byte(r), nil }
