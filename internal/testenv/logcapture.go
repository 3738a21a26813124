package testenv

import (
	"strings"
	"sync"
	"testing"
)

// LogCapture keeps what a slog handler writes and mirrors each line to the
// test log while the test runs (not after: goroutines of a finished test may
// still log, and t.Log would then panic).
type LogCapture struct {
	mu    sync.Mutex
	buf   strings.Builder
	t     *testing.T
	ended bool
}

func NewLogCapture(t *testing.T) *LogCapture {
	c := &LogCapture{t: t}
	t.Cleanup(func() {
		c.mu.Lock()
		c.ended = true
		c.mu.Unlock()
	})
	return c
}

func (c *LogCapture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf.Write(p)
	if !c.ended {
		c.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

// String is everything written so far.
func (c *LogCapture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// Contains reports whether s was written.
func (c *LogCapture) Contains(s string) bool { return strings.Contains(c.String(), s) }
