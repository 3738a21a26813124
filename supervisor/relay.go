package supervisor

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpsandbox/mcpsandbox/egress"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
	"github.com/mcpsandbox/mcpsandbox/supervisor/audit"
	"github.com/mcpsandbox/mcpsandbox/supervisor/diagnose"
	"github.com/mcpsandbox/mcpsandbox/supervisor/mcprules"
	"github.com/mcpsandbox/mcpsandbox/supervisor/serverreq"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// state is where the supervised server stands, from the host's point of view.
type state uint8

const (
	stateRunning    state = iota // the current process takes host traffic
	stateRestarting              // no process takes traffic yet: host messages are queued
	stateStopped                 // down for good: requests get CodeServerStopped
	stateClosing                 // mcpsandbox is shutting down
)

// maxPending bounds the server→host requests awaiting the host's answer:
// a server once sent 500k sampling/createMessage requests, which took the
// supervisor from 16 to 200 MiB, and its crash then queued 500k
// cancellations. Hosts answer such requests one at a time (a person
// approves each sampling), so 1024 is far beyond real use; the excess is
// answered to the server with CodeServerRequestRefused. At a crash, the
// cancellations sent to the host are bounded by it too.
const maxPending = 1024

// maxServerIDLen bounds the id of a server→host request, which is kept
// while the request is pending (twice: the id and its key); with maxPending
// that bounds what pending requests hold. Real ids are numbers or UUIDs.
const maxServerIDLen = 256

// maxQueued bounds how many host messages are held while the server
// restarts; their bytes are bounded by --max-message.
const maxQueued = 1024

// replayTimeout bounds how long a restarted server may take to answer the
// replayed initialize (npx cold starts take seconds).
const replayTimeout = 30 * time.Second

// A restart gets at least replayStartFactor times as long to answer the
// replayed initialize as the slowest start of the session took to answer
// anything: a server that needs 20 s to start on a slow machine (a cold
// npx, an emulated CPU) must not be killed as hung on every restart.
const replayStartFactor = 3

// replayWaitMax bounds that: a hung restart is still found.
const replayWaitMax = 5 * time.Minute

// noteStartTook records how long a process took from its start to its
// first answer.
func (r *relay) noteStartTook(d time.Duration) {
	for {
		old := r.slowestStart.Load()
		if int64(d) <= old || r.slowestStart.CompareAndSwap(old, int64(d)) {
			return
		}
	}
}

// replayWait is how long a restarted process has to answer the replayed
// initialize.
func (r *relay) replayWait() time.Duration {
	return min(replayWaitMax, max(replayTimeout, replayStartFactor*time.Duration(r.slowestStart.Load())))
}

// drainTimeout bounds the wait for a dead server's last stdout and stderr
// lines; only a descendant that escaped the kill could hold the pipes longer.
const drainTimeout = 2 * time.Second

// relay supervises one MCP server for one host connection: it relays
// messages both ways and restarts the server's processes (generations)
// without losing the host's session. Run wraps exactly one; a daemon would
// hold many. ("server" always means the MCP server child, never this type.)
type relay struct {
	name     string
	pol      policy.Policy
	stateDir string
	rules    mcprules.Rules  // nil: the policy sets no MCP rule, and no pins are enforced
	audit    *audit.Log      // nil: no --audit-log
	gate     *serverreq.Gate // the policy for the server's own requests (gateServerRequests)
	egress   *egress.Proxy   // the egress proxy, or mode none's offline resolver; nil: neither
	facts    diagnose.Facts
	setting  field.Namer
	log      *slog.Logger
	// spec is what every generation starts (Options.spec: the
	// environment it gets was handed in); start and release are the
	// process's (Options): the relay reads no global state.
	spec    sandbox.Spec
	program *sandbox.ProgramID // the program files as the first start found them (checkProgram)
	start   func(sandbox.Spec, *slog.Logger) (sandbox.Process, error)
	release func()
	events  func(Event)
	hostIn  io.Reader
	host    *hostWriter

	// prepared guards the starts (start refuses what it refuses already)
	// and names its command in a crash loop of starts (startsFailed).
	prepared     *Prepared
	startsFailed bool // the last process failed at start (r.mu)

	hostGone     chan struct{} // the host closed its side (EOF or write error)
	hostGoneOnce sync.Once
	// waits is the parent of every held request's Decide ctx: it ends
	// when the host goes away or the session ends (held.go).
	waits    context.Context
	endWaits context.CancelFunc

	mu          sync.Mutex
	state       state
	gen         *generation // current process; nil before the first start
	genCount    int
	stopReason  string // why the server is down for good (stateStopped)
	inflight    map[string]hostRequest
	toHost      [][]byte                 // written to the host once r.mu is released (unlock)
	pending     map[string]serverRequest // server→host requests, by relay id token
	pendingOrig map[string]string        // server id key → relay id token, current generation
	queue       [][]byte
	queueBytes  int
	sess        session
	seq         uint64 // numbers relay ids
	waiters     map[string]chan []byte
	asks        map[string]chan hostAnswer // mcpsandbox's own requests to the host, by id key (hostasks.go)
	restarts    []time.Time
	nRestarts   int
	fail        failRecord // the latest run of identical failures
	stopDetail  string     // the crash loop's last stderr error, for the host only

	logLimit          logLimiter // server-caused log records, all generations
	forgedErrorWarned bool       // a server's error that claimed to be mcpsandbox's was logged (r.mu)

	slowestStart atomic.Int64 // the slowest start → first answer so far (noteStartTook)

	hosted     atomic.Bool   // a host is attached (from the start, unless prestarted)
	warm       atomic.Bool   // prestarted, ready, and waiting for a host
	restartReq chan string   // Session.Restart's requests, at most one pending
	requested  bool          // the exit being handled was a requested restart (r.mu)
	lastExit   string        // why the last process ended (r.mu)
	drained    chan struct{} // closed once no request of process drainGen awaits an answer (r.mu; set by drain)
	drainGen   int
}

// hostRequest is a host request from its arrival to its end (endLocked).
type hostRequest struct {
	hostID   string // the id token as the host sent it
	seq      uint64 // tells it from a later request under the same id (its clock, its end)
	gen      int    // process it was written to; 0 while queued
	method   methodKind
	params   []byte        // kept only for methods the session cache needs
	remapped bool          // the server sees a relay id instead of hostID
	ended    bool          // it ended (the host cancelled it) and waits only for the server's late answer
	resent   bool          // re-sent to a restarted server: its acknowledgement, a duplicate, is not relayed
	timer    *time.Timer   // the --call-timeout clock; nil without one
	audit    *audit.Call   // its audit record; nil when not audited
	call     mcprules.Call // what the MCP rules keep of it; nil: nothing
	wait     *heldCall     // while its Pending decides; nil once relayed, or never held
	denials  uint64        // the server's denials so far at its arrival (denialMark)
}

// serverRequest is a server→host request awaiting the host's response.
type serverRequest struct {
	gen     int
	origID  string // the id token as the server sent it
	origKey string // origID as a map key (see idKey)
}

func newRelay(opts Options) *relay {
	waits, endWaits := context.WithCancel(context.Background())
	return &relay{
		waits:       waits,
		endWaits:    endWaits,
		asks:        make(map[string]chan hostAnswer),
		name:        opts.Name,
		pol:         opts.Policy,
		stateDir:    opts.StateDir,
		rules:       mcprules.New(opts.Policy, mcprules.Options{Setting: opts.Setting}),
		facts:       factsOf(opts.Policy, opts.StateDir, opts.LookupEnv),
		spec:        opts.spec(),
		start:       opts.Prepared.guardStart(opts.Start),
		prepared:    opts.Prepared,
		release:     opts.ReleaseMemory,
		setting:     opts.Setting,
		log:         opts.Log.With("server", opts.Name),
		events:      opts.Events,
		hostIn:      opts.HostIn,
		host:        &hostWriter{w: opts.HostOut},
		hostGone:    make(chan struct{}),
		inflight:    make(map[string]hostRequest),
		pending:     make(map[string]serverRequest),
		pendingOrig: make(map[string]string),
		waiters:     make(map[string]chan []byte),
		sess:        session{subs: make(map[string][]byte)},
		restartReq:  make(chan string, 1),
	}
}

func (r *relay) emit(e Event) {
	if r.events != nil {
		r.events(e)
	}
}

func (r *relay) closeHost() {
	r.hostGoneOnce.Do(func() {
		// Decide's ctx ends before its question does, so a Decide that
		// sees the host gone also finds its ctx ended.
		r.endWaits()
		close(r.hostGone)
	})
}

// serve starts the server and supervises it until the session ends. A
// prestarted session (w) first warms its process up and waits for a host.
func (r *relay) serve(ctx context.Context, w *warmup) (Outcome, error) {
	defer r.endWaits()
	r.host.onError = func(err error) {
		r.log.Warn("writing to the host failed; ending the session", "error", err)
		r.closeHost()
	}
	// A server that cannot start is down for good from the outset: the
	// host's requests get the reason (naming the fix) like after a crash
	// loop, until the host leaves, and Run then returns it as its error.
	var startErr error
	g, err := r.startGeneration()
	r.mu.Lock()
	if err != nil {
		startErr = fmt.Errorf("the server could not be started: %w", err)
		r.state, r.stopReason = stateStopped, r.explain(startErr)
	} else {
		r.gen, r.state = g, stateRunning
	}
	r.mu.Unlock()
	if w != nil {
		if startErr != nil {
			w.ready <- startErr
			return r.finish("the prestarted server could not be started: " + r.stopReason), startErr
		}
		if out, attached := r.warmUp(ctx, g, w); !attached {
			return out, nil
		}
	} else if startErr != nil {
		r.log.Error("mcpsandbox: the server could not be started; requests are answered with the reason until the host disconnects", "reason", r.explain(startErr))
		r.emit(Event{Kind: EventStopped, Reason: r.explain(startErr)})
	}
	go r.readHost()

	for {
		r.mu.Lock()
		st, g := r.state, r.gen
		r.mu.Unlock()
		if st == stateStopped {
			select {
			case <-r.hostGone:
				return r.finish("host closed the connection after the server went down: " + r.stopReason), startErr
			case <-ctx.Done():
				return r.finish("shutdown requested after the server went down: " + r.stopReason), startErr
			case reason := <-r.restartReq:
				r.markRequested()
				if out, done := r.afterExit(ctx, nil, reason, true); done {
					return out, nil
				}
				startErr = nil
				continue
			}
		}
		var out Outcome
		var done bool
		select {
		case <-g.proc.Done():
			ex := g.proc.Exit()
			select {
			case reason := <-g.hang: // killed as hung
				out, done = r.afterExit(ctx, g, reason, true)
			default:
				out, done = r.afterExit(ctx, g, r.exitReason(ex), ex.Failed())
			}
		case reason := <-g.hang:
			g.log.Warn("server hung; killing it", "reason", reason)
			g.proc.Kill()
			<-g.proc.Done()
			out, done = r.afterExit(ctx, g, reason, true)
		case reason := <-r.restartReq:
			g.log.Info("restarting the server on request", "reason", reason)
			r.markRequested()
			// Invisible to the host: what it sends now is held for the
			// next process, and what is in flight is answered first.
			r.mu.Lock()
			r.state = stateRestarting
			r.mu.Unlock()
			r.drain(g, "the restart was requested with requests in flight; waiting for their answers")
			g.stopWriting()
			g.proc.Kill()
			<-g.proc.Done()
			out, done = r.afterExit(ctx, g, reason, true)
		case <-r.hostGone:
			// A host that only closed its input (printf ... | mcpsandbox
			// run) still reads: what it asked is answered first.
			writable := r.awaitAnswers(g)
			return r.shutdown(g, "host closed the connection", writable), nil
		case <-ctx.Done():
			return r.shutdown(g, "shutdown requested", true), nil
		}
		if done {
			return out, nil
		}
	}
}

// markRequested says that the exit about to be handled is a restart asked
// for (Session.Restart), not a failure of the server's.
func (r *relay) markRequested() {
	r.mu.Lock()
	r.requested = true
	r.mu.Unlock()
}

// takeRequested reports, once, whether the exit being handled was asked for.
func (r *relay) takeRequested() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	req := r.requested
	r.requested = false
	return req
}

// finish ends a session whose server is already gone.
func (r *relay) finish(reason string) Outcome {
	r.mu.Lock()
	r.state = stateClosing
	n := r.nRestarts
	for k, req := range r.inflight { // held ones (held.go): the rest were answered at once
		r.endLocked(k, &req, r.stoppedEndLocked([]byte(req.hostID)))
	}
	r.unlock()
	r.log.Error("mcpsandbox: session ended", "reason", reason, "failed", true)
	return Outcome{Reason: reason, Failed: true, Restarts: n}
}
