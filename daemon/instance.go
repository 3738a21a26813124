package daemon

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/launch"
	"github.com/mcpsandbox/mcpsandbox/lock"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// instance is one supervised session of a server: warm (prestarted, no
// client yet) or a client's.
type instance struct {
	id     string
	s      *server
	ctx    context.Context
	cancel context.CancelFunc

	// Under d.mu:
	sess     *supervisor.Session // nil while a cold start is under way
	attached bool
	client   peer
	since    time.Time // attached since
}

// prestartBackoff is the wait after the first failed prestart, doubling
// with each failure in a row up to maxPrestartBackoff.
const (
	prestartBackoff    = time.Second
	maxPrestartBackoff = 5 * time.Minute
)

// newInstance names the server's next instance. Under d.mu.
func (s *server) newInstance() *instance {
	s.d.counters[s.name]++
	inst := &instance{id: fmt.Sprintf("%s#%d", s.name, s.d.counters[s.name]), s: s}
	inst.ctx, inst.cancel = context.WithCancel(s.ctx)
	return inst
}

// options are the supervisor's for one instance of s. Under d.mu.
func (s *server) options(inst *instance, in io.Reader, out io.Writer) supervisor.Options {
	check, prepare := s.startCheck()
	if check != nil {
		check = s.checkPrepared
	}
	return supervisor.Options{
		Name:          s.name,
		Policy:        s.res.Policy,
		StateDir:      s.res.StateDir(),
		FormerState:   s.res.FormerState(),
		HostIn:        in,
		HostOut:       out,
		Log:           s.d.log.With("instance", inst.id),
		Setting:       configKey,
		LookupEnv:     s.d.opts.LookupEnv,
		Environ:       s.d.opts.Environ,
		ReleaseMemory: s.d.release,
		Prepared:      &supervisor.Prepared{Check: check, Command: prepare},
		ID:            s.res.Launch.ID,
		Lock:          lock.BesideConfig(s.d.cfg.File),
		Start:         s.startLaunchLine,
		Neighbours:    s.neighbours(),
		// Its audit lines go to the server's ring, for `logs`.
		AuditTap: func(line []byte) {
			s.d.rings.add(s.name, "audit instance="+inst.id+" "+strings.TrimSuffix(string(line), "\n")+"\n")
		},
	}
}

// startLaunchLine starts the server's launch line as it is now: a reload
// that changed only the launch line (sameButLaunchLine, an upgrade) swaps
// what the next start of each instance runs, the rest of its confinement
// as it was.
func (s *server) startLaunchLine(spec sandbox.Spec, log *slog.Logger) (sandbox.Process, error) {
	s.d.mu.Lock()
	cmd := s.res.Policy.Command
	s.d.mu.Unlock()
	if !slices.Equal(cmd, spec.Args) {
		spec.Args, spec.Script = cmd, launch.Script(cmd)
	}
	return sandbox.Start(spec, log)
}

// startCheck is what a start of the server's launch line, as it is now,
// checks: its packages prepared, and the one the lock pins. Under d.mu.
func (s *server) startCheck() (check func() error, prepare string) {
	// A daemon's lock is beside its config (a policy's pins.lock names another).
	lockPath, _ := s.res.LockPath(func() (string, error) { return lock.BesideConfig(s.d.cfg.File), nil })
	return s.res.StartCheck(lockPath)
}

// checkPrepared is startCheck's check made at each start, so that an
// instance swapped onto a new launch line (startLaunchLine) is checked
// against the new line and the lock as the upgrade left it.
func (s *server) checkPrepared() error {
	s.d.mu.Lock()
	check, _ := s.startCheck()
	s.d.mu.Unlock()
	if check != nil {
		return check()
	}
	return nil
}

// connect gives the client on c an instance of the server named name: a
// warm one, else a fresh one within max-instances, else a refusal. It
// returns once the client's session ended.
func (d *daemon) connect(c *net.UnixConn, in io.Reader, p peer, name string) {
	out := &gate{w: c, open: make(chan struct{})}
	defer out.release() // writes of a session that is gone fail on c
	for {
		d.mu.Lock()
		s := d.servers[name]
		ref := d.mayConnect(s, p, name)
		d.mu.Unlock()
		if ref != nil {
			d.log.Info("mcpsandbox daemon: client refused", "server", name, "uid", p.UID, "pid", p.Pid, "why", ref.Reason)
			d.refuse(c, ref)
			return
		}
		inst, ref, again := s.take(in, out, p)
		if again {
			continue // the server was stopped meanwhile (a reload): ask anew
		}
		if ref != nil {
			d.log.Info("mcpsandbox daemon: client refused", "server", name, "uid", p.UID, "pid", p.Pid, "why", ref.Reason)
			d.refuse(c, ref)
			return
		}
		d.mu.Lock()
		sess := inst.sess
		d.mu.Unlock()
		if err := answerOK(c, Answer{Instance: inst.id}); err != nil {
			inst.cancel() // the client is gone already
		}
		out.release()
		d.log.Info("mcpsandbox daemon: client attached", "server", name, "instance", inst.id, "uid", p.UID, "pid", p.Pid)
		<-sess.Done()
		c.Close() // ends the session's read of the host, if it still reads
		return
	}
}

// mayConnect is why p may not connect to s (nil: it may). Under d.mu.
func (d *daemon) mayConnect(s *server, p peer, name string) *Refusal {
	switch {
	case d.closing:
		return unavailable(RefusedShutdown, "the mcpsandbox daemon is shutting down: connect again once it runs")
	case s == nil && d.disabled(name):
		return unavailable(RefusedNoServer, fmt.Sprintf("server %q is disabled in the daemon's config %s: remove its \"disabled\": true and run `mcpsandbox reload`", name, d.cfg.File))
	case s == nil:
		return unavailable(RefusedNoServer, fmt.Sprintf("the daemon's config %s has no server %q (it has %s): add it there and run `mcpsandbox reload`, or connect to one it has",
			d.cfg.File, name, listOrNone(d.order)))
	case !s.allow.has(p.UID, d.self):
		return unavailable(RefusedPeer, fmt.Sprintf("%s may not use server %q, whose users are %s: add the uid or its user name to the server's users in %s (or to the file's mcpsandbox.users), then run `mcpsandbox reload`",
			uidName(p.UID), name, s.allow, s.entry.Pos))
	}
	return nil
}

// disabled: the config has an entry name that it turns off. Under d.mu.
func (d *daemon) disabled(name string) bool {
	e, ok := d.cfg.Server(name)
	return ok && e.Disabled
}

func unavailable(kind, reason string) *Refusal {
	return &Refusal{Code: supervisor.CodeServerUnavailable, Kind: kind, Message: "server unavailable", Reason: reason}
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// take attaches the client to a warm instance, or starts one for it.
// again: s was stopped meanwhile, look the server up anew.
func (s *server) take(in io.Reader, out io.Writer, p peer) (inst *instance, ref *Refusal, again bool) {
	d := s.d
	for {
		d.mu.Lock()
		if s.stopped {
			d.mu.Unlock()
			return nil, nil, true
		}
		if len(s.warm) > 0 {
			inst := s.warm[0]
			s.warm = s.warm[1:]
			s.signal()
			s.refillAfterFirstWrite(out)
			sess := inst.sess
			d.mu.Unlock()
			if err := sess.Attach(in, out); err != nil {
				d.log.Info("mcpsandbox daemon: a warm instance ended as it was taken; trying another", "instance", inst.id, "error", err)
				continue
			}
			s.attached(inst, p)
			return inst, nil, false
		}
		if s.starting > s.waiting {
			// A prestart is under way that no other client waits for:
			// it is ready sooner than a start begun now.
			s.waiting++
			changed := s.changed
			d.mu.Unlock()
			d.log.Debug("mcpsandbox daemon: a client waits for the prestart under way", "server", s.name, "uid", p.UID)
			var shutdown bool
			select {
			case <-changed:
			case <-d.ctx.Done():
				shutdown = true
			}
			d.mu.Lock()
			s.waiting--
			d.mu.Unlock()
			if shutdown {
				return nil, unavailable(RefusedShutdown, "the mcpsandbox daemon is shutting down"), false
			}
			continue
		}
		if s.count() < s.max {
			inst := s.newInstance()
			s.instances = append(s.instances, inst)
			opts := s.options(inst, in, out)
			d.mu.Unlock()
			sess, err := supervisor.Start(inst.ctx, opts)
			d.mu.Lock()
			if err != nil {
				s.remove(inst)
				d.mu.Unlock()
				inst.cancel()
				return nil, unavailable(RefusedStart, fmt.Sprintf("server %q could not be started: %s", s.name, field.Message(err, configKey))), false
			}
			inst.sess = sess
			s.d.group.Add(1)
			go s.watch(inst)
			d.mu.Unlock()
			s.attached(inst, p)
			return inst, nil, false
		}
		if s.starting > 0 {
			changed := s.changed // at the bound, with prestarts under way: wait for one
			d.mu.Unlock()
			select {
			case <-changed:
				continue
			case <-d.ctx.Done():
				return nil, unavailable(RefusedShutdown, "the mcpsandbox daemon is shutting down"), false
			}
		}
		attached := 0
		for _, i := range s.instances {
			if i.attached {
				attached++
			}
		}
		warm := len(s.instances) - attached
		d.mu.Unlock()
		return nil, unavailable(RefusedMaxInstances, fmt.Sprintf("server %q is at its max-instances, %d (%d with clients, %d warm): raise max-instances of the server at %s and run `mcpsandbox reload`, or end another client's session",
			s.name, s.max, attached, warm, s.entry.Pos)), false
	}
}

// attached records inst's client.
func (s *server) attached(inst *instance, p peer) {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	inst.attached, inst.client, inst.since = true, p, time.Now()
}

// remove drops inst from s's lists. Under d.mu.
func (s *server) remove(inst *instance) (wasWarm bool) {
	s.instances = slices.DeleteFunc(s.instances, func(i *instance) bool { return i == inst })
	n := len(s.warm)
	s.warm = slices.DeleteFunc(s.warm, func(i *instance) bool { return i == inst })
	return len(s.warm) < n
}

// fill starts prestarts until s has its prestart warm instances (ready or
// under way), within max-instances, unless it backs off after failures;
// then one at a time, to probe. Under d.mu.
func (s *server) fill() {
	if s.stopped || s.d.closing {
		return
	}
	if wait := time.Until(s.retryAt); wait > 0 {
		if s.retry == nil {
			s.retry = time.AfterFunc(wait, func() {
				s.d.mu.Lock()
				defer s.d.mu.Unlock()
				s.retry = nil
				s.fill()
			})
		}
		return
	}
	for len(s.warm)+s.starting < s.prestart && s.count() < s.max {
		if s.failures > 0 && s.starting > 0 {
			return
		}
		inst := s.newInstance()
		s.starting++
		s.pending = append(s.pending, inst)
		s.d.group.Add(1)
		go s.prestartOne(inst, s.options(inst, nil, nil))
	}
}

// prestartOne makes inst a warm instance.
func (s *server) prestartOne(inst *instance, opts supervisor.Options) {
	defer s.d.group.Done()
	sess, err := supervisor.Prestart(inst.ctx, opts)
	d := s.d
	d.mu.Lock()
	defer d.mu.Unlock()
	s.starting--
	s.pending = slices.DeleteFunc(s.pending, func(i *instance) bool { return i == inst })
	s.signal()
	if err != nil {
		inst.cancel()
		if !s.stopped && s.ctx.Err() == nil {
			s.failed(field.Message(err, configKey))
			s.fill()
		}
		return
	}
	inst.sess = sess
	s.instances = append(s.instances, inst)
	s.d.group.Add(1)
	go s.watch(inst)
	if s.stopped {
		inst.cancel()
		return
	}
	s.warm = append(s.warm, inst)
	if s.failures > 0 {
		d.log.Info("mcpsandbox daemon: prestart works again", "server", s.name, "instance", inst.id, "failures", s.failures)
	}
	s.failures, s.lastFail, s.retryAt = 0, "", time.Time{}
	d.log.Info("mcpsandbox daemon: instance warm", "server", s.name, "instance", inst.id, "pid", sess.Status().Pid)
	s.fill()
}

// failed notes a failed prestart and backs off; a reason is logged once
// while it repeats. Under d.mu.
func (s *server) failed(reason string) {
	s.failures++
	wait := min(prestartBackoff<<min(s.failures-1, 20), maxPrestartBackoff)
	s.retryAt = time.Now().Add(wait)
	if reason != s.lastFail {
		s.d.log.Warn("mcpsandbox daemon: prestart failed; retrying with backoff (logged again only if the reason changes)", "server", s.name, "reason", reason, "failures", s.failures, "retry_in", wait.String())
		s.lastFail = reason
	} else {
		s.d.log.Debug("mcpsandbox daemon: prestart failed again", "server", s.name, "failures", s.failures, "retry_in", wait.String())
	}
}

// watch waits for inst's session to end and takes it off the books.
func (s *server) watch(inst *instance) {
	defer s.d.group.Done()
	out, _ := inst.sess.Wait()
	inst.cancel()
	d := s.d
	d.mu.Lock()
	wasWarm := s.remove(inst)
	client := inst.client
	attached := inst.attached
	if wasWarm && !s.stopped && s.ctx.Err() == nil {
		s.failed("a warm instance ended before a client came: " + out.Reason)
	}
	s.signal()
	s.fill()
	d.mu.Unlock()
	attrs := []any{"server", s.name, "instance", inst.id, "reason", out.Reason, "restarts", out.Restarts}
	if attached {
		attrs = append(attrs, "uid", client.UID)
	}
	d.log.Info("mcpsandbox daemon: instance ended", attrs...)
}

// refillWait bounds how long a pool waits for the client that took its
// warm instance to get its first answer before it is refilled anyway.
const refillWait = time.Second

// refillAfterFirstWrite refills the pool once the client that took a warm
// instance got the first bytes of its session on out (or after refillWait;
// or when the session ends first, as watch fills then), so that the next
// instance's start, seconds of CPU for npx, does not compete with that
// answer: started at once, it made a warm attach 3-4x slower on a busy
// machine (bench: BenchmarkDaemonAttach). Under d.mu.
func (s *server) refillAfterFirstWrite(out io.Writer) {
	var once sync.Once
	refill := func() {
		once.Do(func() {
			s.d.mu.Lock()
			defer s.d.mu.Unlock()
			s.fill()
		})
	}
	t := time.AfterFunc(refillWait, refill)
	if g, ok := out.(*gate); ok {
		g.afterFirst(func() {
			t.Stop()
			go refill() // not on the session's write path
		})
	}
}

// gate holds a session's writes to its client until the daemon's answer
// is written, so the answer comes first.
type gate struct {
	w    io.Writer
	open chan struct{}
	once sync.Once

	firstMu sync.Mutex
	first   func() // called once, after the first write to the client
}

func (g *gate) release() { g.once.Do(func() { close(g.open) }) }

// afterFirst has f called once the first write to the client returned.
func (g *gate) afterFirst(f func()) {
	g.firstMu.Lock()
	defer g.firstMu.Unlock()
	g.first = f
}

func (g *gate) Write(p []byte) (int, error) {
	<-g.open
	n, err := g.w.Write(p)
	g.firstMu.Lock()
	f := g.first
	g.first = nil
	g.firstMu.Unlock()
	if f != nil {
		f()
	}
	return n, err
}

// neighbours are the config's other servers, for the scanner: by their
// ids in the lock → their tool prefix. Under d.mu.
func (s *server) neighbours() map[string]string {
	out := map[string]string{}
	for _, o := range s.d.servers {
		if o != s && o.res.Launch.ID != "" {
			out[o.res.Launch.ID] = o.res.Policy.ToolPrefix
		}
	}
	return out
}
