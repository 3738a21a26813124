package supervisor

import "sync"

// A crash loop repeats one failure: the same stderr lines, the same exit.
// The log gets them once; a restarted process's stderr lines are held back
// while they repeat the previous failure's, logged the moment one differs
// (or the process takes over the session), and dropped for a count when it
// fails the same way.

// holdLines bounds the lines a failure is compared by; a process that
// printed more is not held back.
const holdLines = 64

// stderrHold decides, for one server process, which stderr lines are logged
// now; it also remembers the lines for the next process to be compared with.
type stderrHold struct {
	mu      sync.Mutex
	expect  []string // the previous failure's lines; nil: nothing to repeat
	held    []string
	open    bool     // lines are logged as they come
	seen    []string // this process's lines, up to holdLines
	over    bool     // it printed more than holdLines
	dropped bool     // the log's rate limit dropped some of its lines
}

func newStderrHold(expect []string) *stderrHold {
	return &stderrHold{expect: expect, open: len(expect) == 0}
}

// take returns the lines to log now for one more line of stderr.
func (h *stderrHold) take(text string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.seen) < holdLines {
		h.seen = append(h.seen, text)
	} else {
		h.over = true
	}
	if h.open {
		return []string{text}
	}
	if len(h.held) < len(h.expect) && h.expect[len(h.held)] == text {
		h.held = append(h.held, text)
		return nil
	}
	h.open = true
	out := append(h.held, text)
	h.held = nil
	return out
}

// release logs from now on and returns what was held.
func (h *stderrHold) release() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.open = true
	out := h.held
	h.held = nil
	return out
}

// repeated reports whether the process printed exactly the previous
// failure's lines (all of them still held).
func (h *stderrHold) repeated() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.expect) == 0 {
		return len(h.seen) == 0
	}
	return !h.open && len(h.held) == len(h.expect)
}

// lines returns what this process printed, for the next one to be compared
// with; nil when it printed too much to compare.
func (h *stderrHold) lines() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.over {
		return nil
	}
	return append([]string(nil), h.seen...)
}

func (h *stderrHold) markDropped() {
	h.mu.Lock()
	h.dropped = true
	h.mu.Unlock()
}

func (h *stderrHold) wasDropped() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.dropped
}
