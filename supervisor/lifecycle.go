package supervisor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor/diagnose"
)

// afterExit handles the end of generation g (it exited, or was killed as
// hung): it answers what g left in flight, then restarts the server and
// replays the session, or stops for good. It returns done=true when the
// session is over.
func (r *relay) afterExit(ctx context.Context, g *generation, reason string, failed bool) (Outcome, bool) {
	requested := r.takeRequested()
	for {
		early, cause := false, ""
		if g != nil {
			r.retire(g, reason, failed)
			early = failed && g.startFailed() && !requested
			if early {
				cause = r.startCause(g.stderr.lastLines(diagnose.StderrLines))
			}
			r.mu.Lock()
			r.startsFailed = early
			r.mu.Unlock()
		}
		restart, delay, stop, end := r.decide(reason, failed, cause, requested)
		requested = false
		r.answerCrashed(g, reason, restart, early, stop, end)
		if end {
			r.stopAll()
			reason := "the server exited by itself (" + reason + "); " + r.setting("Restart") + " " + r.pol.Restart + " does not restart it"
			r.log.Info("mcpsandbox: session ended", "reason", reason, "failed", false)
			return Outcome{Reason: reason, Restarts: r.restartCount()}, true
		}
		if !restart {
			return Outcome{}, false // stopped: serve waits for the host to leave
		}

		r.log.Info("restarting the server", "in", delay, "after", reason)
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-r.hostGone:
			t.Stop()
			return r.shutdown(nil, "host closed the connection while the server was restarting", false), true
		case <-ctx.Done():
			t.Stop()
			return r.shutdown(nil, "shutdown requested while the server was restarting", true), true
		}

		ng, err := r.startGeneration()
		if err != nil {
			g, reason, failed = nil, "restart failed: "+r.explain(err), true
			continue
		}
		r.mu.Lock()
		r.gen = ng
		r.nRestarts++
		r.mu.Unlock()
		init, err := r.replay(ctx, ng)
		switch {
		case errors.Is(err, errHostGone):
			return r.shutdown(ng, "host closed the connection while the server was restarting", false), true
		case ctx.Err() != nil:
			return r.shutdown(ng, "shutdown requested while the server was restarting", true), true
		case errors.Is(err, errDead):
			ex := ng.proc.Exit()
			g, reason, failed = ng, r.exitReason(ex)+" while its session was replayed", true
			continue
		case err != nil:
			ng.log.Error("session replay failed; killing the new server process", "error", err)
			ng.proc.Kill()
			<-ng.proc.Done()
			g, reason, failed = ng, r.explain(err), true
			continue
		}
		if init != nil || r.statelessSession() {
			ng.ready.Store(true) // it serves the host's session now
		}
		r.flush(ng)
		ng.log.Info("server restarted; the host's session continues", "pid", ng.proc.Pid())
		r.emit(Event{Kind: EventReady, Generation: ng.n, Pid: ng.proc.Pid()})
		if init != nil {
			for _, list := range init.listChanged() {
				r.host.write(jsonrpc.NewNotification("notifications/"+list+"/list_changed", nil))
			}
		}
		return Outcome{}, false
	}
}

// retire stops writing to g, kills what is left of its process tree, lets
// its last output drain and releases it.
func (r *relay) retire(g *generation, reason string, failed bool) {
	g.stopWriting()
	g.proc.Kill()
	g.drain()
	g.retired.Store(true)
	g.proc.Close()
	uptime := time.Since(g.started).Round(time.Millisecond)
	r.mu.Lock()
	r.lastExit = reason
	r.mu.Unlock()
	r.logLimit.flush(g.log)
	if n := r.recordFailure(g, reason, failed); n > 1 {
		g.log.Warn("server failed again ("+ordinal(n)+" time), same error", "reason", reason, "uptime", uptime, "pid", g.proc.Pid())
	} else {
		logStderr(g.hold.release(), g.hold, &r.logLimit, g.log)
		attrs := []any{"reason", reason, "uptime", uptime, "pid", g.proc.Pid()}
		if g.hold.wasDropped() { // else its stderr is in the log already
			attrs = append(attrs, "stderr_tail", strings.Join(g.stderr.lastLines(crashTail), "\n"))
		}
		g.log.Warn("server process ended", attrs...)
	}
	r.emit(Event{Kind: EventExited, Generation: g.n, Pid: g.proc.Pid(), Reason: reason})
}

// decide says what follows the end of a server process: a restart after
// delay, a stop for good (with the reason), or the end of the session (a
// clean exit that is not to be restarted).
func (r *relay) decide(reason string, failed bool, cause string, requested bool) (restart bool, delay time.Duration, stop string, end bool) {
	if requested {
		// Asked for: at once, whatever the policy, and not a failure.
		r.mu.Lock()
		r.state, r.stopReason, r.stopDetail = stateRestarting, "", ""
		r.mu.Unlock()
		return true, 0, "", false
	}
	switch {
	case !failed && r.pol.Restart != policy.RestartAlways:
		return false, 0, "", true
	case cause != "":
		stop = cause + " (the server " + reason + " at start; restarting cannot help, so mcpsandbox does not restart it)"
	case r.pol.Restart == policy.RestartNever:
		stop = "the server " + reason + " and " + r.setting("Restart") + " never does not restart it"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if stop == "" {
		now := time.Now()
		recent := r.restarts[:0]
		for _, t := range r.restarts {
			if now.Sub(t) < r.pol.RestartWindow {
				recent = append(recent, t)
			}
		}
		r.restarts = recent
		if r.pol.MaxRestarts > 0 && len(recent) >= r.pol.MaxRestarts {
			stop = fmt.Sprintf("crash loop: the server failed %d times within %s (last: %s%s); mcpsandbox stopped restarting it (%s %d, %s %s)%s",
				len(recent)+1, r.pol.RestartWindow, reason, r.sameErrorLocked(), r.setting("MaxRestarts"), r.pol.MaxRestarts, r.setting("RestartWindow"), r.pol.RestartWindow, r.crashLoopHintLocked())
			r.stopDetail = r.fail.lastLine
		} else {
			delay = r.pol.RestartBackoff.Min << len(recent)
			if delay > r.pol.RestartBackoff.Max || delay <= 0 {
				delay = r.pol.RestartBackoff.Max
			}
			r.restarts = append(r.restarts, now)
			r.state = stateRestarting
			return true, delay, "", false
		}
	}
	r.state = stateStopped
	r.stopReason = stop
	return false, 0, stop, false
}

// answerCrashed answers every host request g left in flight, once, and
// cancels its pending server→host requests. When the server is down for
// good, queued requests are answered too.
func (r *relay) answerCrashed(g *generation, reason string, restart, early bool, stop string, finished bool) {
	gn := 0
	if g != nil {
		gn = g.n
	}
	var mark uint64 // what the dead process was denied, or the session if none
	if g != nil {
		mark = g.denials
	}
	r.mu.Lock()
	for k, req := range r.inflight {
		ofDead := g != nil && req.gen == g.n
		queued := req.gen == 0
		if !ofDead && !(queued && !restart) {
			continue // held for the next process
		}
		if restart && !req.ended && (early || resentMethods.has(req.method)) && r.requeueLocked(k, req) {
			continue // it never reached a working server, or is a stream to reopen: the next one gets it
		}
		id := []byte(req.hostID)
		data := errorData{Reason: reason, Generation: req.gen}
		o, msg := outServerStopped, ""
		switch {
		case restart:
			o, msg = outServerCrashed, "MCP server process ended while handling the request ("+reason+"); mcpsandbox is restarting it, retry the request"
		case finished:
			msg = "MCP server exited (" + reason + ")"
		default:
			msg = "MCP server is down: " + stop + r.stopDetailLocked()
		}
		msg, data = r.withDenied(msg, data, mark)
		r.endLocked(k, &req, refusal(o, id, 0, msg, data))
	}
	if !restart {
		r.queue, r.queueBytes = nil, 0
	}
	for k, p := range r.pending {
		if p.gen == gn {
			delete(r.pending, k)
			r.toHost = append(r.toHost, jsonrpc.NewNotification("notifications/cancelled",
				map[string]any{"requestId": rawJSON(k), "reason": "the MCP server process that sent this request ended (" + reason + ")"}))
		}
	}
	clear(r.pendingOrig)
	r.unlock()
	if stop != "" {
		attrs := []any{"reason", stop, "code", CodeServerStopped}
		if g != nil && g.hold.wasDropped() { // else its stderr is in the log already
			attrs = append(attrs, "stderr_tail", strings.Join(g.stderr.lastLines(crashTail), "\n"))
		}
		r.log.Error("server stopped for good; every request now gets an error until the host disconnects", attrs...)
		r.emit(Event{Kind: EventStopped, Generation: gn, Reason: stop})
	}
}

func (r *relay) restartCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.nRestarts
}

// stopAll makes every later request fail as "shutting down".
func (r *relay) stopAll() {
	r.mu.Lock()
	r.state = stateClosing
	r.mu.Unlock()
}

// shutdown ends the session: the server gets EOF on stdin, then after
// --grace SIGTERM, after another --grace SIGKILL, and its whole tree is
// killed. With answerHost (the host is still there), requests left in
// flight are answered.
func (r *relay) shutdown(g *generation, reason string, answerHost bool) Outcome {
	r.mu.Lock()
	r.state = stateClosing
	r.queue, r.queueBytes = nil, 0
	failed := r.stopReason != ""
	r.mu.Unlock()
	if g != nil && !g.retired.Load() {
		r.stopProcess(g)
	}
	r.mu.Lock()
	for k, req := range r.inflight {
		if answerHost {
			r.endLocked(k, &req, refusal(outServerStopped, []byte(req.hostID), 0, "mcpsandbox is shutting down", errorData{Reason: reason}))
		} else {
			r.endLocked(k, &req, quietEnd(outHostGone))
		}
	}
	r.unlock()
	if failed {
		reason += " (the server had stopped: " + r.stopReason + ")"
	}
	r.log.Info("mcpsandbox: session ended", "reason", reason, "failed", failed)
	return Outcome{Reason: reason, Failed: failed, Restarts: r.restartCount()}
}

// stopProcess stops g politely (it gets what was queued for it, then EOF),
// then firmly, and releases it.
func (r *relay) stopProcess(g *generation) {
	g.dead.Store(true)
	g.stopHeartbeat()
	g.out.close() // what the host sent last is written first
	steps := []struct {
		what string
		act  func()
	}{
		{"closed its stdin", func() {}},
		{"sent SIGTERM", func() {
			g.out.stop()
			g.proc.Stdin().Close() // it may not read what was left for it
			g.proc.Signal(syscall.SIGTERM)
		}},
	}
	exited := false
	for _, step := range steps {
		step.act()
		t := time.NewTimer(r.pol.Grace)
		select {
		case <-g.proc.Done():
			exited = true
			t.Stop()
		case <-t.C:
			g.log.Info("server still running after grace period", "step", step.what, "grace", r.pol.Grace)
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
	r.logLimit.flush(g.log)
	g.log.Info("server process stopped", "exit", g.proc.Exit().String())
}

// rawJSON lets an id token be embedded as-is in a marshalled value.
type rawJSON string

func (r rawJSON) MarshalJSON() ([]byte, error) { return []byte(r), nil }

// awaitAnswers, after the host closed its input, gives the server up to
// --grace to answer what the host asked before its stdin is closed (SDK
// servers end their handlers on EOF), unless the host cannot be written
// to anyway. It reports whether the host can still be written to, so that
// what is left gets mcpsandbox's answer.
func (r *relay) awaitAnswers(g *generation) (writable bool) {
	r.host.mu.Lock()
	writable = !r.host.failed
	r.host.mu.Unlock()
	if writable {
		r.drain(g, "the host closed its input with requests in flight; waiting for their answers")
	}
	return writable
}

// drain waits up to --grace for g to answer the host requests it has in
// flight (or to die or hang); why is logged when there are any.
func (r *relay) drain(g *generation, why string) {
	r.mu.Lock()
	n := r.awaitingLocked(g.n)
	if n == 0 {
		r.mu.Unlock()
		return
	}
	drained := make(chan struct{})
	r.drained, r.drainGen = drained, g.n
	r.mu.Unlock()
	g.log.Info(why, "requests", n, "grace", r.pol.Grace)
	t := time.NewTimer(r.pol.Grace)
	defer t.Stop()
	select {
	case <-drained:
	case <-t.C:
	case <-g.proc.Done():
	case <-g.hang:
	}
	r.mu.Lock()
	r.drained = nil
	r.mu.Unlock()
}
