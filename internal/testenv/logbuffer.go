package testenv

import (
	"bytes"
	"sync"
	"time"
)

// LogBuffer is a log (a slog handler's writer) that a test can wait on:
// every write wakes the waiters, so nothing polls or sleeps.
type LogBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed and replaced on every write
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
	return l.b.Write(p)
}

// String is everything written so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// WaitUntil waits, at most limit, until the log satisfies ok, and reports
// whether it did.
func (l *LogBuffer) WaitUntil(limit time.Duration, ok func(log string) bool) bool {
	deadline := time.After(limit)
	for {
		l.mu.Lock()
		done := ok(l.b.String())
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		changed := l.changed
		l.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-changed:
		case <-deadline:
			return false
		}
	}
}
