package supervisor

import (
	"bytes"
	"io"
	"runtime/debug"
	"sync/atomic"
	"time"
)

// Framing: one JSON-RPC message per '\n'-terminated line, at most max bytes
// before the newline. A longer line is never buffered whole: once the bound
// is passed, the reader keeps a head and a tail of it (enough to recover the
// id of a response, wherever the server put it) and discards the rest up to
// the newline.

const (
	initialLineBuf = 32 << 10 // enough for the usual message
	keepLineBuf    = 1 << 20  // a bigger buffer is dropped once idle, to keep RSS low
	oversizeHead   = 4 << 10
	oversizeTail   = 512
)

// frame is one line read by lineReader.
type frame struct {
	// line is the message with its '\n' when it had one. It aliases the
	// reader's buffer and is valid until the next call to next.
	line []byte
	// oversize is set when the line exceeded the bound and was discarded.
	oversize bool
	size     int64  // length of the discarded line
	head     []byte // its first bytes
	tail     []byte // its last bytes, newline excluded
	// found is its top-level id, wherever it sat, when the reader looks
	// for ids (see idFinder); foundRequest/foundResponse say whether it
	// had a method, or a result or error.
	found                       []byte
	foundRequest, foundResponse bool
}

// lineReader reads bounded lines from r, reusing one buffer.
type lineReader struct {
	r          io.Reader
	max        int
	buf        []byte
	start, end int // unread data is buf[start:end]
	scanned    int // buf[start:scanned] holds no newline
	err        error
	tailBuf    []byte
	findIDs    bool // follow oversized lines to find their id
	finder     idFinder
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: r, max: max}
}

// next reads the next line into f. It returns io.EOF (or the read error)
// once no data is left; a last line without a newline is returned first.
func (lr *lineReader) next(f *frame) error {
	*f = frame{}
	lr.shrink()
	for {
		if i := bytes.IndexByte(lr.buf[lr.scanned:lr.end], '\n'); i >= 0 {
			stop := lr.scanned + i + 1
			if line := lr.buf[lr.start : stop-1]; len(line) > lr.max {
				// Over the bound, though its newline was already read.
				f.oversize, f.size = true, int64(len(line))
				f.head = append([]byte(nil), line[:min(oversizeHead, len(line))]...)
				f.tail = append([]byte(nil), line[len(line)-min(oversizeTail, len(line)):]...)
				lr.find(f, line, true)
				lr.finish(f)
			} else {
				f.line = lr.buf[lr.start:stop]
			}
			lr.start, lr.scanned = stop, stop
			return nil
		}
		lr.scanned = lr.end
		if lr.end-lr.start > lr.max {
			return lr.discard(f)
		}
		if lr.err != nil {
			if lr.end > lr.start {
				f.line = lr.buf[lr.start:lr.end]
				lr.start, lr.scanned = lr.end, lr.end
				return nil
			}
			return lr.err
		}
		lr.fill()
	}
}

// fill reads more data, compacting or growing the buffer first when full.
func (lr *lineReader) fill() {
	if lr.end == len(lr.buf) {
		pending := lr.end - lr.start
		limit := lr.max + 1 + initialLineBuf
		switch {
		case lr.start > 0 && (pending < len(lr.buf)/2 || len(lr.buf) >= limit):
			copy(lr.buf, lr.buf[lr.start:lr.end])
		default:
			size := min(max(initialLineBuf, 2*len(lr.buf)), limit)
			if size > keepLineBuf {
				// A message past 1 MiB is a big one: go straight to the
				// bound instead of doubling, which would copy it again at
				// every step. Pages are touched only as data arrives.
				size = limit
			}
			nb := make([]byte, size)
			copy(nb, lr.buf[lr.start:lr.end])
			lr.buf = nb
		}
		lr.scanned -= lr.start
		lr.end = pending
		lr.start = 0
	}
	n, err := lr.r.Read(lr.buf[lr.end:])
	lr.end += n
	if err != nil {
		lr.err = err
	} else if n == 0 {
		// A reader that returns (0, nil) forever would spin; treat it as
		// closed after a few tries, as bufio does.
		for range 100 {
			if n, err = lr.r.Read(lr.buf[lr.end:]); n > 0 || err != nil {
				break
			}
		}
		lr.end += n
		if err != nil {
			lr.err = err
		} else if n == 0 {
			lr.err = io.ErrNoProgress
		}
	}
}

// discard drops an oversized line up to its newline, keeping head and tail.
func (lr *lineReader) discard(f *frame) error {
	f.oversize = true
	f.head = append([]byte(nil), lr.buf[lr.start:lr.start+min(oversizeHead, lr.end-lr.start)]...)
	lr.tailBuf = lr.tailBuf[:0]
	chunk := lr.buf[lr.start:lr.end]
	first := true
	for {
		if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
			f.size += int64(i)
			lr.keepTail(chunk[:i])
			lr.find(f, chunk[:i], first)
			lr.start = lr.end - (len(chunk) - i - 1)
			lr.scanned = lr.start
			break
		}
		f.size += int64(len(chunk))
		lr.keepTail(chunk)
		lr.find(f, chunk, first)
		first = false
		lr.start, lr.end, lr.scanned = 0, 0, 0
		if lr.err != nil {
			break
		}
		lr.fill()
		chunk = lr.buf[:lr.end]
	}
	lr.finish(f)
	f.tail = append([]byte(nil), lr.tailBuf...)
	return nil
}

// find feeds part of an oversized line to the id finder (from its start
// when first); finish hands the finder's verdict to f.
func (lr *lineReader) find(f *frame, p []byte, first bool) {
	if !lr.findIDs {
		return
	}
	if first {
		lr.finder.reset()
	}
	lr.finder.feed(p)
}

func (lr *lineReader) finish(f *frame) {
	if !lr.findIDs {
		return
	}
	f.found = bytes.Clone(lr.finder.found())
	f.foundRequest, f.foundResponse = lr.finder.hasMethod, lr.finder.hasResult
}

func (lr *lineReader) keepTail(p []byte) {
	if len(p) >= oversizeTail {
		lr.tailBuf = append(lr.tailBuf[:0], p[len(p)-oversizeTail:]...)
		return
	}
	lr.tailBuf = append(lr.tailBuf, p...)
	if over := len(lr.tailBuf) - oversizeTail; over > 0 {
		lr.tailBuf = append(lr.tailBuf[:0], lr.tailBuf[over:]...)
	}
}

// shrink drops a buffer grown for a big message once it is idle, so one
// 16 MiB result does not stay resident for the whole session.
func (lr *lineReader) shrink() {
	if len(lr.buf) <= keepLineBuf {
		return
	}
	pending := lr.end - lr.start
	if pending > initialLineBuf {
		return
	}
	nb := make([]byte, initialLineBuf)
	copy(nb, lr.buf[lr.start:lr.end])
	lr.buf = nb
	lr.scanned -= lr.start
	lr.start, lr.end = 0, pending
	releaseMemorySoon()
}

var releasePending atomic.Bool

// releaseMemorySoon hands the memory of dropped big buffers back to the OS
// shortly after (Go's background scavenger would take minutes), at most
// once per burst of big messages.
func releaseMemorySoon() {
	if releasePending.CompareAndSwap(false, true) {
		time.AfterFunc(200*time.Millisecond, func() {
			releasePending.Store(false)
			debug.FreeOSMemory()
		})
	}
}
