package supervisor

import (
	"context"
	"errors"
	"io"
	"sync/atomic"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor/audit"
	"github.com/mcpsandbox/mcpsandbox/supervisor/mcprules"
	"github.com/mcpsandbox/mcpsandbox/supervisor/pins"
)

// Session is one supervised server serving one host connection, running
// in the background: what a daemon holds many of. Run is Start then Wait.
type Session struct {
	r    *relay
	pins *pins.Rule // the pinned contract's rule, for Status; nil: none
	warm *warmup    // nil unless prestarted
	done chan struct{}
	out  Outcome
	err  error
}

// Start begins supervising opts' server for the host on opts.HostIn and
// opts.HostOut and returns at once. Its error is Run's before anything
// starts (the policy, the audit log, egress); what happens later, Wait
// returns.
func Start(ctx context.Context, opts Options) (*Session, error) {
	s, _, err := begin(ctx, opts, nil)
	return s, err
}

// Run supervises until the host disconnects, ctx is cancelled (shutdown as on
// host EOF, but in-flight requests are answered), or the server ends the
// session by exiting cleanly when it is not to be restarted. It returns an
// error only when the policy is invalid, its audit log cannot be opened
// (both before anything starts) or the first server process cannot be
// started; in the last case only once the host has gone (or ctx is
// cancelled), having answered each of its requests with CodeServerStopped
// and the reason.
//
// When Run returns because of ctx or the server, a goroutine may still be
// blocked reading HostIn; it ends once HostIn is closed.
func Run(ctx context.Context, opts Options) (Outcome, error) {
	s, out, err := begin(ctx, opts, nil)
	if err != nil {
		return out, err
	}
	return s.Wait()
}

// begin validates opts, opens what the relay shares and starts serving in
// the background.
func begin(ctx context.Context, opts Options, w *warmup) (*Session, Outcome, error) {
	opts = opts.withDefaults()
	var err error
	if err = opts.Policy.Validate(); err != nil {
		return nil, Outcome{Reason: field.Message(err, opts.Setting)}, err
	}
	if opts.Name == "" && len(opts.Policy.Command) > 0 {
		opts.Name = baseName(opts.Policy.Command[0])
	}
	opts.moveFormerState()
	r := newRelay(opts)
	// What several rooms read of the policy is read once: its tool
	// overrides (pins and approval tiers) and its secret formats (the
	// audit's masker and the arguments a person is shown).
	scanner := mcprules.SecretScanner(opts.Policy)
	overrides, err := policy.ParseToolOverrides(opts.Policy.ToolOverrides)
	var pinned *pins.Rule
	if err == nil {
		pinned, err = r.pinRules(opts, overrides)
	}
	if err == nil {
		err = r.approvalRules(opts, pinned, overrides, scanner)
	}
	if err != nil {
		return nil, Outcome{Reason: err.Error()}, err
	}
	r.rules = mcprules.Chain(r.rules, opts.rules)
	p := opts.Policy
	r.audit, err = audit.Open(audit.Config{Path: p.AuditLog, MaxSize: int64(p.AuditMaxSize), Mask: p.AuditMask, Secrets: scanner, Server: opts.Name, Log: r.log, Tap: opts.AuditTap})
	if err != nil {
		return nil, Outcome{Reason: field.Message(err, opts.Setting)}, err
	}
	r.gateServerRequests()
	conns := &connections{r: r, tools: make(map[uint64][]string)}
	r.egress, err = egressOf(p, opts, conns.open, conns.close)
	if err != nil {
		r.audit.Close()
		return nil, Outcome{Reason: field.Message(err, opts.Setting)}, err
	}
	s := &Session{r: r, pins: pinned, warm: w, done: make(chan struct{})}
	if w == nil {
		r.hosted.Store(true)
	}
	go func() {
		defer close(s.done)
		s.out, s.err = r.serve(ctx, w)
		if r.egress != nil {
			r.egress.Close()
		}
		r.audit.Close()
	}()
	return s, Outcome{}, nil
}

// Wait returns once supervision has ended, with Run's results.
func (s *Session) Wait() (Outcome, error) {
	<-s.done
	return s.out, s.err
}

// Done is closed when supervision has ended.
func (s *Session) Done() <-chan struct{} { return s.done }

var (
	errSessionEnded  = errors.New("the session has ended")
	errNotPrestarted = errors.New("the session was not prestarted, or a host is attached already")
)

// Attach gives a prestarted session its host: from now on the relay
// reads hostIn and writes hostOut, and the host's initialize is the first
// the warm process sees. Once only.
func (s *Session) Attach(hostIn io.Reader, hostOut io.Writer) error {
	if s.warm == nil || !s.warm.attaching.CompareAndSwap(false, true) {
		return errNotPrestarted
	}
	select {
	case s.warm.attach <- hostEnds{in: hostIn, out: hostOut}:
		return nil
	case <-s.done:
		return errSessionEnded
	}
}

// Restart replaces the current server process with a new one, brought
// into the host's session as after a crash (the session is replayed), but
// unseen by the host: what it sends meanwhile is held for the new process,
// and what is in flight gets up to --grace to be answered before the old
// process is killed (only what is left then gets CodeServerCrashed). It
// does not count towards
// --max-restarts, happens under --restart never too, and brings back a
// server that was down for good. A prestarted session without a host
// ends instead (its pool makes a fresh one). A restart already under way
// is not doubled.
func (s *Session) Restart(reason string) error {
	select {
	case <-s.done:
		return errSessionEnded
	default:
	}
	r := s.r
	r.mu.Lock()
	st := r.state
	if st == stateRunning && r.hosted.Load() {
		// Held from now on, not at the relay loop's next turn: a request
		// sent after Restart returns must reach the new process.
		r.state = stateRestarting
	}
	r.mu.Unlock()
	switch st {
	case stateRestarting:
		return nil
	case stateClosing:
		return errSessionEnded
	}
	if reason == "" {
		reason = "restart requested"
	}
	select {
	case r.restartReq <- reason:
	default: // one is pending already
	}
	return nil
}

// hostEnds is what Attach hands a prestarted relay.
type hostEnds struct {
	in  io.Reader
	out io.Writer
}

// warmup is a prestarted session's link to Prestart and Attach.
type warmup struct {
	ready     chan error // the stand-in handshake's result, once
	attach    chan hostEnds
	attaching atomic.Bool
}
