package supervisor

import (
	"bytes"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
)

// The server's stderr is free-form logging: each line goes to the
// supervisor's log, and the last stderrKeep bytes are kept for crash reports.

const (
	stderrKeep    = 64 << 10
	stderrMaxLine = 16 << 10 // longer lines are discarded past their head
	crashTail     = 20       // stderr lines quoted in a crash report
)

// stderrRing keeps the most recent bytes of a stream.
type stderrRing struct {
	mu   sync.Mutex
	buf  []byte
	next int
	full bool
}

func (r *stderrRing) add(line []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.buf == nil {
		r.buf = make([]byte, stderrKeep)
	}
	for len(line) > 0 {
		n := copy(r.buf[r.next:], line)
		line = line[n:]
		r.next += n
		if r.next == len(r.buf) {
			r.next, r.full = 0, true
		}
	}
}

// lastLines returns up to n of the most recent complete lines.
func (r *stderrRing) lastLines(n int) []string {
	r.mu.Lock()
	var data []byte
	if r.full {
		data = append(append(data, r.buf[r.next:]...), r.buf[:r.next]...)
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:] // the first line is cut
		}
	} else {
		data = append(data, r.buf[:r.next]...)
	}
	r.mu.Unlock()
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// pumpStderr logs r line by line into the ring and the log until EOF.
// Blank lines are neither: they carry nothing, and a flood of them once
// made most of a 403 MB log. The ring gets every other line, whatever the
// rate limit lets through to the log.
func pumpStderr(r io.Reader, ring *stderrRing, hold *stderrHold, limit *logLimiter, log *slog.Logger, done chan<- struct{}) {
	defer close(done)
	lr := jsonrpc.NewLineReader(r, stderrMaxLine)
	var f jsonrpc.Frame
	for lr.Next(&f) == nil {
		var text string
		switch {
		case f.Oversize:
			text = logValueN(f.Head[:min(len(f.Head), stderrLogMax)], stderrLogMax) + "… (" + strconv.FormatInt(f.Size, 10) + " bytes)"
		case jsonrpc.IsBlank(f.Line):
			continue
		default:
			text = logValueN(f.Line, stderrLogMax)
		}
		ring.add([]byte(text + "\n"))
		logStderr(hold.take(text), hold, limit, log)
	}
}

// logStderr logs lines of the server's stderr, as far as the rate limit
// lets it.
func logStderr(lines []string, hold *stderrHold, limit *logLimiter, log *slog.Logger) {
	for _, text := range lines {
		if limit.allow(log) {
			log.Info("server stderr", "line", text)
		} else {
			hold.markDropped()
		}
	}
}
