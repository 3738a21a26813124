package daemon

import (
	"context"
	"log/slog"
	"sync"
)

// The daemon keeps, per server, the last records of its log that carry the
// server's name (its stderr, its crashes and restarts, what the daemon did
// with it) for `mcpsandbox logs NAME`, wherever the log itself goes. A
// ring is bounded in records and bytes; a server cannot flood it past
// that, and the supervisor rate-limits what a server makes it log anyway.
const (
	ringRecords = 1000
	ringBytes   = 1 << 20
	// followBuffer is how many records wait for a slow follower before
	// later ones are dropped (and counted) for it; logging never waits.
	followBuffer = 1024
)

// logRings holds each server's ring.
type logRings struct {
	mu    sync.Mutex
	rings map[string]*ring
}

type ring struct {
	lines     []string // oldest first
	bytes     int
	followers map[*follower]struct{}
}

// follower receives a server's records as they come.
type follower struct {
	C       chan string
	dropped int // records that found C full; under logRings.mu
}

func newLogRings() *logRings { return &logRings{rings: map[string]*ring{}} }

func (l *logRings) ring(server string) *ring {
	r := l.rings[server]
	if r == nil {
		r = &ring{followers: map[*follower]struct{}{}}
		l.rings[server] = r
	}
	return r
}

// add appends one formatted record (a line with its newline) to server's
// ring and hands it to its followers.
func (l *logRings) add(server, line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.ring(server)
	r.lines = append(r.lines, line)
	r.bytes += len(line)
	drop := 0
	for len(r.lines)-drop > ringRecords || (r.bytes > ringBytes && drop < len(r.lines)-1) {
		r.bytes -= len(r.lines[drop])
		drop++
	}
	if drop > 0 {
		r.lines = append(r.lines[:0:0], r.lines[drop:]...)
	}
	for f := range r.followers {
		select {
		case f.C <- line:
		default:
			f.dropped++
		}
	}
}

// lines is a copy of server's ring; with follow, also a follower that
// gets every record after them (end it with unfollow).
func (l *logRings) lines(server string, follow bool) ([]string, *follower) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.ring(server)
	lines := append([]string(nil), r.lines...)
	if !follow {
		return lines, nil
	}
	f := &follower{C: make(chan string, followBuffer)}
	r.followers[f] = struct{}{}
	return lines, f
}

// takeDropped returns and resets how many records f missed.
func (l *logRings) takeDropped(f *follower) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := f.dropped
	f.dropped = 0
	return n
}

func (l *logRings) unfollow(server string, f *follower) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.ring(server).followers, f)
}

// forget drops a removed server's ring.
func (l *logRings) forget(server string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r := l.rings[server]; r != nil && len(r.followers) == 0 {
		delete(l.rings, server)
	}
}

// ringHandler passes every record on to the daemon's log and copies those
// that carry a server attribute, as text lines, into that server's ring.
type ringHandler struct {
	next   slog.Handler
	rings  *logRings
	server string       // from WithAttrs; "" until one named it
	text   slog.Handler // formats into the ring of server (nil without one)
	groups int          // groups opened: a server attribute inside one is not the server
	attrs  []slog.Attr  // attributes before server was known, for text
}

// ringLevel is what the rings keep, whatever the daemon's log level.
const ringLevel = slog.LevelInfo

func newRingHandler(next slog.Handler, rings *logRings) *ringHandler {
	return &ringHandler{next: next, rings: rings}
}

func (h *ringHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= ringLevel || h.next.Enabled(ctx, l)
}

func (h *ringHandler) Handle(ctx context.Context, rec slog.Record) error {
	var err error
	if h.next.Enabled(ctx, rec.Level) {
		err = h.next.Handle(ctx, rec)
	}
	if rec.Level < ringLevel {
		return err
	}
	text, server := h.text, h.server
	if h.groups == 0 {
		rec.Attrs(func(a slog.Attr) bool {
			if a.Key == "server" && a.Value.Kind() == slog.KindString {
				server = a.Value.String()
				text = nil
				return false
			}
			return true
		})
	}
	if server == "" {
		return err
	}
	if text == nil {
		text = slog.NewTextHandler(ringWriter{h.rings, server}, nil).WithAttrs(h.attrs)
	}
	text.Handle(ctx, rec)
	return err
}

func (h *ringHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.next = h.next.WithAttrs(attrs)
	if h.groups == 0 && h.server == "" {
		for _, a := range attrs {
			if a.Key == "server" && a.Value.Kind() == slog.KindString {
				c.server = a.Value.String()
			}
		}
		c.attrs = append(append([]slog.Attr(nil), h.attrs...), attrs...)
		if c.server != "" {
			c.text = slog.NewTextHandler(ringWriter{h.rings, c.server}, nil).WithAttrs(c.attrs)
		}
		return &c
	}
	if c.text != nil {
		c.text = c.text.WithAttrs(attrs)
	} else {
		c.attrs = append(append([]slog.Attr(nil), h.attrs...), attrs...)
	}
	return &c
}

func (h *ringHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.next = h.next.WithGroup(name)
	c.groups++
	if c.text != nil {
		c.text = c.text.WithGroup(name)
	}
	// Attributes added in a group before the server is known reach the
	// ring without the group's prefix; nothing here logs so.
	return &c
}

// ringWriter receives one formatted record per Write from a text handler.
type ringWriter struct {
	rings  *logRings
	server string
}

func (w ringWriter) Write(p []byte) (int, error) {
	w.rings.add(w.server, string(p))
	return len(p), nil
}
