package supervisor

import (
	"io"
	"sync"
	"sync/atomic"
)

// hostWriter serialises writes to the host: one Write per message.
type hostWriter struct {
	mu      sync.Mutex
	w       io.Writer
	failed  bool
	onError func(error)
	// writing counts writes in progress or waiting for the lock: while the
	// host does not read, the server's answers (pings too) wait behind
	// them, and that is not the server's fault.
	writing atomic.Int32
}

// busy reports whether a write to the host is in progress or waiting.
func (h *hostWriter) busy() bool { return h.writing.Load() > 0 }

func (h *hostWriter) write(msg []byte) {
	h.writing.Add(1)
	defer h.writing.Add(-1)
	h.mu.Lock()
	if h.failed {
		h.mu.Unlock()
		return
	}
	_, err := h.w.Write(msg)
	if err != nil {
		h.failed = true
	}
	h.mu.Unlock()
	if err != nil && h.onError != nil {
		h.onError(err)
	}
}
