package supervisor

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
)

// Prestart starts opts' server before any host is there (opts.HostIn and
// opts.HostOut are not used) and returns once its process answered a
// stand-in handshake: a ping, which every SDK answers before initialize
// and which commits the server to nothing. So the warm process has paid
// its start (npx, node loading the server) and the host's own initialize,
// given on Attach, is the first it sees: it negotiates with the real
// client's version and capabilities, and the warm instance cannot be told
// from a fresh one. (A stand-in initialize cannot be undone: Go SDK servers
// refuse a second one, "duplicate initialize", and a server told other
// client capabilities than the client's would behave differently.)
//
// Prestart fails when the process cannot be started, exits or does not
// answer within five minutes, or ctx ends. Until Attach, the heartbeat
// watches the process; if it dies, is hung, or Restart is called, the
// session ends (Wait returns) and the caller makes another.
func Prestart(ctx context.Context, opts Options) (*Session, error) {
	w := &warmup{ready: make(chan error, 1), attach: make(chan hostEnds)}
	opts.HostIn, opts.HostOut = nil, &heldWriter{}
	s, _, err := begin(ctx, opts, w)
	if err != nil {
		return nil, err
	}
	if err := <-w.ready; err != nil {
		s.Wait()
		return nil, err
	}
	return s, nil
}

// prestartTimeout bounds the wait for a prestarted process's first answer:
// a cold npx start on a slow machine takes tens of seconds, not minutes.
const prestartTimeout = replayWaitMax

// maxHeldForHost bounds what a prestarted session keeps for a host that is
// not there yet (a server's early log notifications).
const maxHeldForHost = 1 << 20

// warmUp brings a prestarted process to readiness, reports it on w.ready
// and waits for a host. attached is false when the session ended instead.
func (r *relay) warmUp(ctx context.Context, g *generation, w *warmup) (out Outcome, attached bool) {
	if err := r.standIn(ctx, g); err != nil {
		g.stopWriting()
		g.proc.Kill()
		<-g.proc.Done()
		r.retire(g, err.Error(), true)
		if denied := r.deniedText(r.deniedSince(g.denials)); denied != "" {
			err = fmt.Errorf("%w: %s", err, denied) // the daemon's prestart_backoff shows it
		}
		w.ready <- fmt.Errorf("the prestarted server did not become ready: %w", err)
		return r.endWarm("the prestarted server did not become ready: "+err.Error(), true), false
	}
	r.noteStartTook(time.Since(g.started))
	r.startHeartbeat(g)
	r.warm.Store(true)
	g.log.Info("server is warm; waiting for a client", "pid", g.proc.Pid(), "took", time.Since(g.started).Round(time.Millisecond))
	w.ready <- nil

	var reason string
	select {
	case ends := <-w.attach:
		r.attachHost(ends)
		return Outcome{}, true
	case <-g.proc.Done():
		reason = r.exitReason(g.proc.Exit())
		select {
		case reason = <-g.hang:
		default:
		}
	case reason = <-g.hang:
		g.proc.Kill()
		<-g.proc.Done()
	case reason = <-r.restartReq:
		g.stopWriting()
		g.proc.Kill()
		<-g.proc.Done()
		r.warm.Store(false)
		r.retire(g, "restart requested: "+reason, false)
		return r.endWarm("restart requested before a client attached: "+reason, false), false
	case <-ctx.Done():
		r.warm.Store(false)
		return r.shutdown(g, "shutdown requested before a client attached", false), false
	}
	r.warm.Store(false)
	r.retire(g, reason, true)
	return r.endWarm("the warm server process ended before a client attached: "+reason, true), false
}

// standIn sends the stand-in handshake and waits for any answer to it.
func (r *relay) standIn(ctx context.Context, g *generation) error {
	id := relayPrefix + "ready:" + strconv.Itoa(g.n)
	answer, forget := r.await(id)
	defer forget()
	t := time.NewTimer(prestartTimeout)
	defer t.Stop()
	if err := g.write(jsonrpc.NewRequest(quoteID(id), "ping", nil)); err != nil {
		if !errors.Is(err, errDead) {
			return fmt.Errorf("could not write to it: %w", err)
		}
		// A broken pipe races the exit: report the exit, as the other
		// path does, so a failing prestart's reason does not flap.
		select {
		case <-g.proc.Done():
			return errors.New(r.exitReason(g.proc.Exit()) + " before it answered")
		case <-t.C:
			return fmt.Errorf("could not write to it: %w", err)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	select {
	case <-answer: // a result or an error: either way it reads and answers
		return nil
	case <-g.proc.Done():
		return errors.New(r.exitReason(g.proc.Exit()) + " before it answered")
	case reason := <-g.hang:
		return errors.New(reason)
	case <-t.C:
		return fmt.Errorf("no answer to a ping within %s", prestartTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// endWarm ends a prestarted session that never had a host.
func (r *relay) endWarm(reason string, failed bool) Outcome {
	r.mu.Lock()
	r.state = stateClosing
	r.mu.Unlock()
	r.log.Info("mcpsandbox: session ended", "reason", reason, "failed", failed)
	return Outcome{Reason: reason, Failed: failed}
}

// attachHost gives the relay its host: what was held for it goes first.
func (r *relay) attachHost(ends hostEnds) {
	r.hostIn = ends.in
	h := r.host
	h.mu.Lock()
	held, _ := h.w.(*heldWriter)
	h.w = ends.out
	var err error
	if held != nil && len(held.buf) > 0 {
		_, err = ends.out.Write(held.buf)
	}
	if err != nil {
		h.failed = true
	}
	h.mu.Unlock()
	if held != nil && held.dropped > 0 {
		r.log.Warn("messages the server wrote before a client attached were over the bound and dropped", "dropped", held.dropped, "bound_bytes", maxHeldForHost)
	}
	if err != nil && h.onError != nil {
		h.onError(err)
	}
	r.hosted.Store(true)
	r.warm.Store(false)
}

// heldWriter keeps what a prestarted session writes to its host before one
// attaches, bounded. hostWriter serialises its writes.
type heldWriter struct {
	buf     []byte
	dropped int
}

func (h *heldWriter) Write(p []byte) (int, error) {
	if len(h.buf)+len(p) > maxHeldForHost {
		h.dropped++
		return len(p), nil
	}
	h.buf = append(h.buf, p...)
	return len(p), nil
}
