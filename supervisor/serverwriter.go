package supervisor

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Everything written to a server process (host messages, refusals,
// cancellations, pings, the replay) goes through its serverWriter: a
// bounded queue and one goroutine that writes it to the process's stdin in
// order. Sending never blocks, so no reader of the relay waits on a server
// that stops reading; one whose queue is full is hung. When nothing waits,
// the sender writes what the pipe takes at once without blocking (the
// usual message, all of it), and only the rest goes to the writer: a
// hand-over to another goroutine would cost each request a wake-up.

// maxToServer bounds the messages not yet written to a server process;
// their bytes are bounded by twice --max-message (one being written, one
// waiting). A server that reads keeps the queue near empty, even one that
// floods the host with requests and so gets thousands of refusals at once
// (maxPending, CodeServerRequestRefused); one that stops reading while it
// writes on fills it, and is then killed as hung.
const maxToServer = 8192

var errFull = errors.New("the server does not read its input")

type serverWriter struct {
	maxBytes int
	onFull   func(reason string) // called once, when a message does not fit
	// tryWrite writes what the pipe takes now and never blocks; nil when
	// stdin cannot be written so.
	tryWrite func([]byte) (int, error)

	mu      sync.Mutex
	queue   [][]byte // handed over, not yet taken by the writer
	n       int      // messages not yet written: queued or being written
	bytes   int      // and their bytes
	stopped bool     // no more writing: the process is gone or hung
	closing bool     // write what is queued, then close stdin
	full    bool

	wake chan struct{}
	done chan struct{} // closed when the writer goroutine returns
}

func newServerWriter(stdin io.Writer, maxMessage int, onFull func(string)) *serverWriter {
	return &serverWriter{maxBytes: 2 * maxMessage, onFull: onFull, tryWrite: nonBlocking(stdin),
		wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// nonBlocking returns a write of one attempt on a pipe in non-blocking
// mode (as os.Pipe makes them), or nil for anything else.
func nonBlocking(w io.Writer) func([]byte) (int, error) {
	sc, ok := w.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	nonblock := false
	rc.Control(func(fd uintptr) {
		fl, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		nonblock = err == nil && fl&unix.O_NONBLOCK != 0
	})
	if !nonblock {
		return nil
	}
	return func(p []byte) (int, error) {
		var n int
		var werr error
		if err := rc.Write(func(fd uintptr) bool {
			n, werr = unix.Write(int(fd), p)
			return true // one attempt: never wait for room
		}); err != nil {
			return 0, err
		}
		if werr == unix.EAGAIN {
			return 0, nil
		}
		return max(n, 0), werr
	}
}

// send queues msg (newline-terminated, owned by the writer from now on).
// It fails once the process is gone or being stopped (errDead) or when the
// queue is full (errFull: the server is then declared hung).
func (w *serverWriter) send(msg []byte) error {
	w.mu.Lock()
	switch {
	case w.stopped || w.closing:
		w.mu.Unlock()
		return errDead
	case w.full:
		w.mu.Unlock()
		return errFull
	case w.n >= maxToServer || w.n > 0 && w.bytes+len(msg) > w.maxBytes:
		w.full = true
		reason := fmt.Sprintf("hang: it stopped reading its input (%d messages, %d bytes wait for it)", w.n, w.bytes)
		w.mu.Unlock()
		w.onFull(reason)
		return errFull
	}
	if w.n == 0 && w.tryWrite != nil {
		n, err := w.tryWrite(msg)
		if err != nil {
			w.stopped = true // the process is gone
			w.mu.Unlock()
			return errDead
		}
		if n == len(msg) {
			w.mu.Unlock()
			return nil
		}
		msg = msg[n:]
	}
	w.queue = append(w.queue, msg)
	w.n++
	w.bytes += len(msg)
	w.mu.Unlock()
	w.signal()
	return nil
}

func (w *serverWriter) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// stop drops what is queued and ends the writer once its write in
// progress returns (the process died or is being killed).
func (w *serverWriter) stop() {
	w.mu.Lock()
	w.stopped = true
	w.queue = nil
	w.mu.Unlock()
	w.signal()
}

// close lets the writer write what is queued and then close stdin: the
// polite end of a session. Messages sent later fail.
func (w *serverWriter) close() {
	w.mu.Lock()
	w.closing = true
	w.mu.Unlock()
	w.signal()
}

// run is the writer goroutine of one process.
func (w *serverWriter) run(stdin io.WriteCloser) {
	defer close(w.done)
	for {
		w.mu.Lock()
		for len(w.queue) == 0 && !w.stopped {
			if w.closing {
				w.mu.Unlock()
				stdin.Close()
				return
			}
			w.mu.Unlock()
			<-w.wake
			w.mu.Lock()
		}
		if w.stopped {
			w.mu.Unlock()
			return
		}
		batch := w.queue
		w.queue = nil
		w.mu.Unlock()
		for _, m := range batch {
			_, err := stdin.Write(m)
			w.mu.Lock()
			w.n--
			w.bytes -= len(m)
			if err != nil {
				w.stopped = true // the process is gone: what it was sent is lost with it
			}
			stopped := w.stopped
			w.mu.Unlock()
			if stopped {
				return
			}
		}
	}
}
