package supervisor

import (
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpsandbox/mcpsandbox/healthcheck"
	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
)

// generation is one server process. A restart makes a new one; ids and
// requests belonging to an old one are never mixed into a newer one.
type generation struct {
	n       int
	proc    sandbox.Process
	log     *slog.Logger
	started time.Time
	stderr  stderrRing
	hold    *stderrHold // which stderr lines are logged (a crash loop logs its error once)

	out      *serverWriter // everything written to the process
	dead     atomic.Bool   // stop writing: the process exited or is being stopped
	retired  atomic.Bool   // its crash was handled: late output is dropped
	answered atomic.Bool   // it answered something: the heartbeat may start
	ready    atomic.Bool   // it took over the host's session after a restart
	denials  uint64        // the denials before it started (denialMark)

	checkerMu sync.Mutex
	checker   *healthcheck.Checker
	hang      chan string   // the heartbeat's verdict
	stopped   chan struct{} // closed when the generation is retired
	stopOnce  sync.Once

	stdoutDone, stderrDone chan struct{}
}

var errDead = errors.New("server process is gone")

// write hands one newline-terminated message (no longer the caller's) to
// the process's writer; it never blocks.
func (g *generation) write(msg []byte) error {
	if g.dead.Load() {
		return errDead
	}
	return g.out.send(msg)
}

// declareHung passes a verdict that g is hung to the supervision loop,
// which restarts it, and kills it at once (a replay waits for it too); the
// first verdict counts. It may be called under r.mu.
func (g *generation) declareHung(reason string) {
	select {
	case g.hang <- reason:
		go g.proc.Kill()
	default:
	}
}

// startGeneration starts a new server process and its readers.
func (r *relay) startGeneration() (*generation, error) {
	r.mu.Lock()
	r.genCount++
	n := r.genCount
	r.mu.Unlock()
	log := r.log.With("generation", n)
	if r.pol.Unconfined {
		log.Warn("UNCONFINED: the server runs with mcpsandbox's own user, files and network (--unconfined); only supervision applies")
	}
	if err := r.checkProgram(); err != nil {
		return nil, err
	}
	spec, stopEgress := withEgress(r.spec, r.egress)
	denials := r.denialMark()
	proc, err := r.start(spec, log)
	if err != nil {
		stopEgress()
		return nil, err
	}
	g := &generation{
		n:          n,
		proc:       proc,
		log:        log,
		started:    time.Now(),
		denials:    denials,
		hold:       newStderrHold(r.repeatLines()),
		hang:       make(chan string, 1),
		stopped:    make(chan struct{}),
		stdoutDone: make(chan struct{}),
		stderrDone: make(chan struct{}),
	}
	if len(g.hold.expect) > 0 {
		// A healthy restart prints its banner again: it is logged late,
		// not lost.
		time.AfterFunc(holdFor, func() { logStderr(g.hold.release(), g.hold, &r.logLimit, log) })
	}
	g.out = newServerWriter(proc.Stdin(), int(r.pol.MaxMessage), g.declareHung)
	go g.out.run(proc.Stdin())
	go r.readServer(g)
	go pumpStderr(proc.Stderr(), &g.stderr, g.hold, &r.logLimit, log, g.stderrDone)
	go func() {
		// Stop writing the moment it exits: host requests from then on are
		// held for the next process instead of being lost in a dead pipe.
		<-proc.Done()
		g.dead.Store(true)
		stopEgress() // its namespace is gone: close what served it
	}()
	log.Info("server started", "pid", proc.Pid(), "command", r.pol.Command)
	r.emit(Event{Kind: EventStarted, Generation: n, Pid: proc.Pid()})
	return g, nil
}

// startHeartbeat starts pinging g; called once it answered something, since
// cold starts can take seconds.
func (r *relay) startHeartbeat(g *generation) {
	if r.pol.PingInterval <= 0 {
		return
	}
	r.mu.Lock()
	var discover []byte
	fallback := ""
	if r.sess.init == nil && r.sess.discoverParams != nil {
		// Stateless sessions have no ping; server/discover is cheap and
		// every 2026-07-28 server answers it.
		discover, fallback = r.sess.discoverParams, "server/discover"
	}
	r.mu.Unlock()
	c := healthcheck.New(healthcheck.Options{
		Interval: r.pol.PingInterval,
		Timeout:  r.pol.PingTimeout,
		Failures: r.pol.PingFailures,
		IDPrefix: relayPrefix + "ping:" + strconv.Itoa(g.n) + ":",
		Fallback: fallback,
		Excused:  r.host.busy,
		Log:      g.log,
		Send: func(id, method string) {
			var params []byte
			if method == "server/discover" {
				params = discover
			}
			g.write(jsonrpc.NewRequest(quoteID(id), method, params))
		},
	})
	g.checkerMu.Lock()
	if g.checker != nil || g.dead.Load() {
		g.checkerMu.Unlock()
		return
	}
	g.checker = c
	g.checkerMu.Unlock()
	go func() {
		select {
		case <-c.Dead():
			g.declareHung(c.Reason())
		case <-g.stopped:
		}
	}()
	c.Start()
}

func (g *generation) probe() *healthcheck.Checker {
	g.checkerMu.Lock()
	defer g.checkerMu.Unlock()
	return g.checker
}

// stopWriting marks g dead for writers, drops what waits to be written to
// it and stops its heartbeat: it died, or is being killed.
func (g *generation) stopWriting() {
	g.dead.Store(true)
	g.out.stop()
	g.stopHeartbeat()
}

func (g *generation) stopHeartbeat() {
	g.stopOnce.Do(func() { close(g.stopped) })
	if c := g.probe(); c != nil {
		c.Stop()
	}
}

// drain waits (bounded) for the readers to see EOF after the process died,
// so responses it wrote just before dying still reach the host.
func (g *generation) drain() {
	t := time.NewTimer(drainTimeout)
	defer t.Stop()
	for _, ch := range []chan struct{}{g.stdoutDone, g.stderrDone} {
		select {
		case <-ch:
		case <-t.C:
			g.log.Warn("server output still open after it died (a descendant holds it); closing it")
			return
		}
	}
}

// checkProgram notes the confined server's program files before its first
// start and, before each later one, refuses to start them changed: the
// sandbox keeps them read-only inside, and this catches a way around it
// (another name for the file in a writable grant, another server).
func (r *relay) checkProgram() error {
	if r.spec.Unconfined {
		return nil
	}
	if r.program == nil {
		id := sandbox.ProgramOf(r.spec)
		r.program = &id
		return nil
	}
	return r.program.Unchanged()
}
