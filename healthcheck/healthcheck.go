// Package healthcheck finds servers that stopped answering: it sends a probe
// request every interval and declares the server dead after a number of
// probes in a row went unanswered within the timeout. It knows nothing of
// processes or pipes: the caller gives it a function that sends a probe and
// feeds it the answers.
//
// A probe is a JSON-RPC ping. A server that answers ping with -32601 (method
// not found; stateless 2026-07-28 servers have no ping) is alive but cannot
// be pinged: the checker switches to the fallback request when the caller
// named one, and otherwise stops probing, leaving the caller to rely on
// process liveness.
package healthcheck

import (
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// codeMethodNotFound is the JSON-RPC error code that means "no such method".
const codeMethodNotFound = -32601

// Options configure a Checker.
type Options struct {
	Interval time.Duration // between probes (after the previous one settled)
	Timeout  time.Duration // an answer later than this is a failure
	Failures int           // failures in a row that make the server dead
	// IDPrefix starts every probe id; the caller routes answers whose id
	// starts with it back to Answer.
	IDPrefix string
	// Send writes one probe request with the given id and method. It may
	// block; the checker does not wait for it.
	Send func(id, method string)
	// Fallback is the method probed after a ping was answered with -32601;
	// empty means stop probing.
	Fallback string
	// Excused, when set, is asked at each timeout: true means the answer
	// may be stuck behind the caller itself (e.g. it is blocked writing to
	// its own peer, so it reads no answers), and the miss does not count.
	Excused func() bool
	Log     *slog.Logger
}

// Checker probes one server until it is stopped or finds the server dead.
type Checker struct {
	opts    Options
	answers chan answer
	dead    chan struct{}
	stop    chan struct{}
	once    sync.Once
	start   sync.Once
	reason  string
	rtt     atomic.Int64 // the last answered probe's round trip, ns
}

type answer struct {
	id      string
	isError bool
	code    int
}

// New returns a checker that has not started probing.
func New(opts Options) *Checker {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Failures < 1 {
		opts.Failures = 1
	}
	return &Checker{
		opts:    opts,
		answers: make(chan answer, 4),
		dead:    make(chan struct{}),
		stop:    make(chan struct{}),
	}
}

// Start begins probing; later calls do nothing. Start it once the server is
// initialized (cold starts can take seconds).
func (c *Checker) Start() {
	c.start.Do(func() { go c.run() })
}

// Stop ends probing. Safe to call more than once and before Start.
func (c *Checker) Stop() { c.once.Do(func() { close(c.stop) }) }

// Dead is closed when the server missed Failures probes in a row.
func (c *Checker) Dead() <-chan struct{} { return c.dead }

// Reason says why the server was declared dead; it waits until Dead is
// closed.
func (c *Checker) Reason() string {
	<-c.dead
	return c.reason
}

// LastRTT is the round trip of the last answered probe; 0 before any.
func (c *Checker) LastRTT() time.Duration { return time.Duration(c.rtt.Load()) }

// Answer feeds the answer to a probe: isError with the JSON-RPC error code
// for an error response. Answers to other ids are ignored.
func (c *Checker) Answer(id string, isError bool, code int) {
	select {
	case c.answers <- answer{id, isError, code}:
	case <-c.stop:
	case <-c.dead:
	}
}

func (c *Checker) run() {
	method := "ping"
	failures := 0
	interval := time.NewTimer(c.opts.Interval)
	defer interval.Stop()
	for seq := 1; ; seq++ {
		select {
		case <-interval.C:
		case <-c.stop:
			return
		}
		id := c.opts.IDPrefix + strconv.Itoa(seq)
		sent := time.Now()
		go c.opts.Send(id, method)
		timeout := time.NewTimer(c.opts.Timeout)
	wait:
		for {
			select {
			case a := <-c.answers:
				if a.id != id {
					continue // a late answer to an earlier probe
				}
				failures = 0
				c.rtt.Store(int64(time.Since(sent)))
				c.opts.Log.Debug("heartbeat answered", "method", method, "id", id)
				if a.isError && a.code == codeMethodNotFound {
					if method != "ping" || c.opts.Fallback == "" {
						c.opts.Log.Info("server does not answer "+method+"; heartbeat falls back to process liveness", "method", method)
						timeout.Stop()
						<-c.stop
						return
					}
					c.opts.Log.Info("server has no ping; heartbeat probes with "+c.opts.Fallback+" instead", "fallback", c.opts.Fallback)
					method = c.opts.Fallback
				}
				break wait
			case <-timeout.C:
				if c.opts.Excused != nil && c.opts.Excused() {
					c.opts.Log.Debug("heartbeat: no answer in time, but the answer may be stuck behind the supervisor; not counted", "method", method)
					break wait
				}
				failures++
				c.opts.Log.Warn("heartbeat: no answer in time", "method", method, "timeout", c.opts.Timeout, "failures", failures, "limit", c.opts.Failures)
				if failures >= c.opts.Failures {
					c.reason = "hang: no answer to " + strconv.Itoa(failures) + " " + method + " request(s) in a row, " + c.opts.Timeout.String() + " timeout each"
					close(c.dead)
					return
				}
				break wait
			case <-c.stop:
				timeout.Stop()
				return
			}
		}
		timeout.Stop()
		interval.Reset(c.opts.Interval)
	}
}
