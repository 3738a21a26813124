package logsink

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coreos/go-systemd/v22/journal"
)

// queueLen is how many records may wait for the journal. journal.Send blocks
// while journald's socket queue is full (journald busy or stalled); Handle
// must not, so records wait here, and one that finds the queue full goes to
// the fallback at once.
const queueLen = 1024

// journalHandler sends each record to the journal natively, one field per
// attribute. A record the journal refuses, or that finds the queue full, is
// written as text to the fallback (stderr), never dropped.
type journalHandler struct {
	level    slog.Level
	prefix   string  // the open groups, each ending in '_'
	attrs    []field // from WithAttrs, named under the groups open then
	fallback slog.Handler
	out      *journalSender
}

// entry is one record on its way to the journal.
type entry struct {
	message  string
	priority journal.Priority
	vars     map[string]string
	record   slog.Record  // for the fallback
	fallback slog.Handler // with the record's attributes and groups
}

type journalSender struct {
	mu     sync.RWMutex // RLock to send on queue, Lock to close it
	closed bool
	queue  chan entry
	done   chan struct{}

	// The first record of a run of refusals or overflows says why on the
	// fallback; a run of refusals ends with the next record the journal
	// takes, one of overflows with the next that finds room in the queue.
	refusing    atomic.Bool
	overflowing atomic.Bool
	note        slog.Handler // the fallback without attributes
}

func newJournalHandler(level slog.Level, fallback slog.Handler) *journalHandler {
	s := &journalSender{queue: make(chan entry, queueLen), done: make(chan struct{}), note: fallback}
	go s.run()
	return &journalHandler{level: level, fallback: fallback, out: s}
}

func (h *journalHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *journalHandler) WithAttrs(as []slog.Attr) slog.Handler {
	if len(as) == 0 {
		return h
	}
	c := *h
	c.attrs = append([]field(nil), h.attrs...)
	for _, a := range as {
		c.attrs = appendFields(c.attrs, h.prefix, a)
	}
	c.fallback = h.fallback.WithAttrs(as)
	return &c
}

func (h *journalHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.prefix = h.prefix + name + "_"
	c.fallback = h.fallback.WithGroup(name)
	return &c
}

// Handle renders the record's fields now (values may change or be
// LogValuers resolved at the call) and queues it.
func (h *journalHandler) Handle(ctx context.Context, r slog.Record) error {
	e := h.entry(r)
	s := h.out
	s.mu.RLock()
	defer s.mu.RUnlock()
	if !s.closed {
		select {
		case s.queue <- e:
			if s.overflowing.Load() {
				s.overflowing.Store(false)
			}
			return nil
		default:
		}
		if !s.overflowing.Swap(true) {
			s.note.Handle(ctx, noteRecord(slog.LevelWarn, "the journal is not keeping up; records go to stderr until it does"))
		}
	}
	return e.fallback.Handle(ctx, e.record)
}

func (h *journalHandler) entry(r slog.Record) entry {
	fs := append([]field(nil), h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		fs = appendFields(fs, h.prefix, a)
		return true
	})
	vars := make(map[string]string, len(fs)+1)
	// fieldName keeps attributes off this and Send's MESSAGE and PRIORITY.
	vars["SYSLOG_IDENTIFIER"] = identifier
	for _, f := range fs {
		vars[uniqueName(f.name, vars)] = f.value
	}
	return entry{
		message:  bounded(r.Message, maxMessage),
		priority: priority(r.Level),
		vars:     vars,
		record:   r.Clone(),
		fallback: h.fallback,
	}
}

func (s *journalSender) run() {
	defer close(s.done)
	for e := range s.queue {
		if err := journal.Send(e.message, e.priority, e.vars); err != nil {
			if !s.refusing.Swap(true) {
				n := noteRecord(slog.LevelError, "the journal refused a record; records go to stderr until it takes them")
				n.AddAttrs(slog.String("err", err.Error()))
				s.note.Handle(context.Background(), n)
			}
			e.fallback.Handle(context.Background(), e.record)
			continue
		}
		s.refusing.Store(false)
	}
}

// noteRecord is the sink's word about itself, written on the fallback.
func noteRecord(l slog.Level, msg string) slog.Record {
	return slog.NewRecord(time.Now(), l, msg, 0)
}

// close sends what is queued and stops the sender; records after it go to
// the fallback.
func (s *journalSender) close() error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.queue)
	}
	s.mu.Unlock()
	<-s.done
	return nil
}
