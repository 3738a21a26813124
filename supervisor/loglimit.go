package supervisor

import (
	"log/slog"
	"sync"
	"time"
)

// Log records caused by what a server writes (its stderr lines, stray or
// invalid stdout lines, answers to ids not in flight) are rate-limited per
// server, as journald limits each service (RateLimitIntervalSec=30s,
// RateLimitBurst=10000) but scaled to one process: at most logBurst records
// per logInterval, then one record saying the rest are suppressed and, when
// the interval ends or the process does, one saying how many were. A
// flood of one-byte lines once turned 4 MiB into 403 MB of log. The crash
// report's stderr tail is kept apart from this and stays complete.

const (
	logInterval = 30 * time.Second
	logBurst    = 1000
)

type logLimiter struct {
	mu         sync.Mutex
	start      time.Time
	n          int // records in the current interval
	suppressed int // records dropped in it, not yet reported
}

// allow reports whether one more server-caused record may be logged.
func (l *logLimiter) allow(log *slog.Logger) bool {
	now := time.Now()
	l.mu.Lock()
	report := 0
	if now.Sub(l.start) >= logInterval {
		report, l.suppressed = l.suppressed, 0
		l.start, l.n = now, 0
	}
	ok := l.n < logBurst
	first := false
	if ok {
		l.n++
	} else {
		first = l.suppressed == 0
		l.suppressed++
	}
	l.mu.Unlock()
	if report > 0 {
		logSuppressed(log, report)
	}
	if first {
		log.Warn("the server is flooding the log; its log records are suppressed for the rest of the interval (the crash report still quotes its last stderr lines)",
			"burst", logBurst, "interval", logInterval)
	}
	return ok
}

// flush reports the records suppressed so far, e.g. when a server process
// ends, so the count is never lost.
func (l *logLimiter) flush(log *slog.Logger) {
	l.mu.Lock()
	report := l.suppressed
	l.suppressed = 0
	l.mu.Unlock()
	if report > 0 {
		logSuppressed(log, report)
	}
}

func logSuppressed(log *slog.Logger, n int) {
	log.Warn("server log records suppressed by the rate limit", "suppressed", n, "burst", logBurst, "interval", logInterval)
}
