package audit

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/secrets"
)

// Defaults of Config.
const (
	DefaultKeep  = 3    // rotated files kept: FILE.1 to FILE.3
	DefaultQueue = 1024 // lines waiting for the writer; lines are a few KiB at most (arguments are cut at 4 KiB)
)

// Config is what one relay's audit log is opened with.
type Config struct {
	Path    string   // the file (policy AuditLog); "" opens none
	MaxSize int64    // rotate before a line would take the file past it (AuditMaxSize); 0: never
	Keep    int      // rotated files kept; 0: DefaultKeep
	Queue   int      // lines waiting for the writer; 0: DefaultQueue
	Mask    []string // globs of secret keys, beside the built-in ones (AuditMask)
	// Secrets masks every string that holds a secret it finds, whatever
	// its key (the policy's SecretPatterns too); nil: the default formats.
	Secrets *secrets.Scanner
	Server  string // the server's name, in every line
	Log     *slog.Logger
	// Tap, when set, is given every line as it is made (also with no
	// Path): the daemon shows them in `mcpsandbox logs`. It must be quick
	// and must not keep the slice past the call.
	Tap func(line []byte)
}

// Log is one relay's (one host session's) audit log: its lines carry the
// server's name and a session id of its own, and go to the writer of its
// file, shared with every other Log of that file in this process. Keep,
// MaxSize and Queue are those of the first Log that opened the file.
type Log struct {
	server  string
	session string // random, made once per Log: tells sessions apart in one file
	mask    *masker
	log     *slog.Logger
	w       *writer           // nil: no file, only the tap
	tap     func(line []byte) // nil: none

	dropped atomic.Int64 // lines lost to a full queue, not yet reported
	lost    atomic.Int64 // lines lost to a full queue, in all

	mu     sync.Mutex
	closed bool
}

// Open opens the audit log c names, or returns nil when c.Path is "". An
// error names AuditLog.
func Open(c Config) (*Log, error) {
	if c.Path == "" && c.Tap == nil {
		return nil, nil
	}
	if c.Keep <= 0 {
		c.Keep = DefaultKeep
	}
	if c.Queue <= 0 {
		c.Queue = DefaultQueue
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	var id [8]byte
	rand.Read(id[:])
	l := &Log{server: c.Server, session: hex.EncodeToString(id[:]), mask: newMasker(c.Mask, c.Secrets), log: c.Log, tap: c.Tap}
	if c.Path == "" {
		return l, nil // lines only for the tap
	}
	w, narrowed, err := acquire(c.Path, c.MaxSize, c.Keep, c.Queue)
	if err != nil {
		return nil, &field.Error{Field: "AuditLog", Value: c.Path, Problem: "cannot be opened", Err: err,
			Fix: "choose a file in a directory mcpsandbox can write, or leave {AuditLog} out"}
	}
	l.w = w
	if narrowed {
		c.Log.Warn("the audit log was readable by others; its mode is now 0600 (what it held before may have been read)", "file", c.Path)
	}
	c.Log.Info("audit log opened", "file", c.Path, "session", l.session)
	return l, nil
}

// Session is the id in this Log's lines.
func (l *Log) Session() string { return l.session }

// Lost is how many of this Log's lines a full queue dropped.
func (l *Log) Lost() int { return int(l.lost.Load()) }

// Close writes what this Log queued (waiting at most closeTimeout: a hung
// file system must not hold mcpsandbox's exit), and the count of its
// dropped lines, and lets go of the file. Calls ending later are not
// logged.
func (l *Log) Close() {
	if l == nil {
		return
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	l.mu.Unlock()
	if l.w == nil {
		return
	}
	defer l.w.release()
	t := time.NewTimer(closeTimeout)
	defer t.Stop()
	done := make(chan struct{})
	select {
	case l.w.queue <- entry{log: l, done: done}:
	case <-t.C:
		l.log.Warn("the audit log did not take its last lines in time; they are lost")
		return
	}
	select {
	case <-done:
	case <-t.C:
		l.log.Warn("the audit log did not take its last lines in time; they are lost")
	}
}

// send queues a line, or counts it dropped when the queue is full.
func (l *Log) send(line []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	if l.tap != nil {
		l.tap(line)
	}
	if l.w == nil {
		return
	}
	select {
	case l.w.queue <- entry{log: l, line: line}:
	default:
		l.dropped.Add(1)
		l.lost.Add(1)
	}
}

func (l *Log) droppedLine(n int) []byte {
	line, _ := json.Marshal(struct {
		Time    string `json:"time"`
		Server  string `json:"server"`
		Session string `json:"session"`
		Dropped int    `json:"dropped"`
	}{timeOf(time.Now()), l.server, l.session, n})
	return append(line, '\n')
}

func timeOf(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }
