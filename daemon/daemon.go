package daemon

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/mcpsandbox/mcpsandbox/daemon/config"
	"github.com/mcpsandbox/mcpsandbox/launch"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// Options is one daemon. Like supervisor.Options it takes nothing from
// its process but what is handed in, so tests run daemons side by side.
type Options struct {
	Config    string // the config file
	SocketDir string // where to listen; "": SocketDir's default for Host.Root
	// Log receives the daemon's records (the CLI's journal or rotated
	// file); nil: none. The per-server rings fill either way.
	Log slog.Handler
	// LookupEnv reads the daemon's environment: bare env NAMEs of a
	// server's policy, XDG_RUNTIME_DIR. Nil: an empty one.
	LookupEnv func(string) (string, bool)
	// Environ is what an unconfined server inherits (os.Environ()).
	Environ []string
	// Host is the machine servers are resolved for (launch.FromProcess());
	// each entry is resolved in its cwd, or the config's directory
	// (Host.InDir). Nil LookupEnv: Options.LookupEnv.
	Host launch.Host
	// Reload, when set, reloads the config on each receive (SIGHUP).
	Reload <-chan struct{}
	// Ready, when set, is called once the daemon listens, with its
	// socket's path.
	Ready func(socket string)
}

// daemon is one running daemon.
type daemon struct {
	opts    Options
	log     *slog.Logger
	rings   *logRings
	self    int // the daemon's uid
	ctx     context.Context
	started time.Time
	release func() // hands memory back to the OS, shared by every relay
	socket  string

	reloading sync.Mutex // one reload at a time

	mu       sync.Mutex
	cfg      *config.Config
	servers  map[string]*server // by name
	order    []string           // config order
	counters map[string]int     // instance numbers given, by server name, across reloads
	conns    sync.WaitGroup     // connection handlers
	group    sync.WaitGroup     // prestarts and instance watchers, of every server
	closing  bool
}

// Run loads the config, resolves its servers, listens and serves until ctx
// ends, then shuts every instance down. It returns at once with an error
// when the config does not load or resolve, or the socket cannot be had
// (another daemon holds it: *RunningError).
func Run(ctx context.Context, opts Options) error {
	if opts.LookupEnv == nil {
		opts.LookupEnv = func(string) (string, bool) { return "", false }
	}
	if opts.Host.LookupEnv == nil {
		opts.Host.LookupEnv = opts.LookupEnv
	}
	rings := newLogRings()
	next := opts.Log
	if next == nil {
		next = slog.DiscardHandler
	}
	d := &daemon{
		opts:     opts,
		log:      slog.New(newRingHandler(next, rings)),
		rings:    rings,
		self:     os.Geteuid(),
		ctx:      ctx,
		started:  time.Now(),
		release:  supervisor.MemoryReleaser(200 * time.Millisecond),
		servers:  map[string]*server{},
		counters: map[string]int{},
	}
	cfg, servers, err := d.load()
	if err != nil {
		return &ConfigError{err}
	}
	dir := opts.SocketDir
	if dir == "" {
		if dir, err = SocketDir(opts.Host.Root, opts.LookupEnv); err != nil {
			return err
		}
	}
	ln, err := listen(dir, d.self == 0)
	if err != nil {
		return err
	}
	d.socket = ln.path
	d.mu.Lock()
	d.cfg = cfg
	for _, s := range servers {
		d.servers[s.name] = s
		d.order = append(d.order, s.name)
		s.start(ctx)
	}
	d.mu.Unlock()
	d.log.Info("mcpsandbox daemon: listening", "socket", ln.path, "config", cfg.File, "servers", len(servers), "pid", os.Getpid())
	if opts.Ready != nil {
		opts.Ready(ln.path)
	}

	accepted := make(chan struct{})
	go func() {
		defer close(accepted)
		d.accept(ln)
	}()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case _, ok := <-opts.Reload:
			if !ok {
				opts.Reload = nil
				continue
			}
			if rep, err := d.reload(); err == nil {
				d.log.Info("mcpsandbox daemon: reloaded on SIGHUP", "summary", rep.Summary())
			}
		}
	}
	d.shutdown(ln, accepted)
	return nil
}

// shutdown stops accepting (the socket goes), waits for every instance's
// session to end (ctx, their parent, has ended: each answers its requests
// in flight) and every connection to close.
func (d *daemon) shutdown(ln *listener, accepted <-chan struct{}) {
	d.log.Info("mcpsandbox daemon: shutting down", "socket", ln.path)
	ln.close()
	<-accepted
	d.mu.Lock()
	d.closing = true
	servers := make([]*server, 0, len(d.servers))
	for _, s := range d.servers {
		servers = append(servers, s)
	}
	d.mu.Unlock()
	for _, s := range servers {
		s.stop("the daemon is shutting down")
	}
	d.group.Wait()
	d.conns.Wait()
	d.log.Info("mcpsandbox daemon: stopped")
}

func (d *daemon) accept(ln *listener) {
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			// EMFILE and the like: wait a moment rather than spin.
			d.log.Warn("mcpsandbox daemon: accept failed", "error", err)
			select {
			case <-time.After(100 * time.Millisecond):
			case <-d.ctx.Done():
				return
			}
			continue
		}
		d.conns.Add(1)
		go func() {
			defer d.conns.Done()
			d.serveConn(c)
		}()
	}
}

// serveConn reads a connection's hello and does what it asks.
func (d *daemon) serveConn(c *net.UnixConn) {
	p, err := peerOf(c)
	if err != nil {
		d.log.Warn("mcpsandbox daemon: cannot tell who connected; closing", "error", err)
		c.Close()
		return
	}
	c.SetReadDeadline(time.Now().Add(helloTimeout))
	r := bufio.NewReaderSize(c, 4<<10)
	var h Hello
	if err := readJSONLine(r, maxHello, true, &h); err != nil {
		d.refuse(c, &Refusal{Kind: RefusedHello, Message: "bad hello",
			Reason: fmt.Sprintf("the first line must be a hello of the daemon protocol, e.g. {\"v\":%d,\"connect\":\"NAME\"}: %v", Version, err)})
		return
	}
	c.SetReadDeadline(time.Time{})
	if h.V != Version {
		d.refuse(c, &Refusal{Kind: RefusedVersion, Message: "protocol version not spoken",
			Reason: fmt.Sprintf("this daemon speaks protocol version %d, the client %d: use an mcpsandbox of the daemon's version", Version, h.V)})
		return
	}
	switch {
	case h.Connect != "" && h.Control == "":
		d.connect(c, rest(r, c), p, h.Connect)
	case h.Control != "" && h.Connect == "":
		d.control(c, r, p, h)
	default:
		d.refuse(c, &Refusal{Kind: RefusedHello, Message: "bad hello",
			Reason: `a hello has either "connect" (a server's name) or "control"`})
	}
}

// rest is what a connection's reader holds after the hello, then the
// connection itself: the host's stream as its first bytes were sent.
func rest(r *bufio.Reader, c net.Conn) io.Reader {
	n := r.Buffered()
	if n == 0 {
		return c
	}
	b, _ := r.Peek(n)
	return io.MultiReader(bytes.NewReader(bytes.Clone(b)), c)
}

// refuse answers a hello with a refusal and closes the connection.
func (d *daemon) refuse(c net.Conn, r *Refusal) {
	c.SetWriteDeadline(time.Now().Add(helloTimeout))
	writeLine(c, Answer{V: Version, Error: r})
	c.Close()
}

// answer answers a hello with a and leaves the connection open.
func answerOK(w io.Writer, a Answer) error {
	a.V, a.OK = Version, true
	return writeLine(w, a)
}
