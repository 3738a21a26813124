package jsonrpc

import (
	"bytes"
	"io"
	"runtime"
)

// Framing: one JSON-RPC message per '\n'-terminated line, at most max bytes
// before the newline. A longer line is never buffered whole: once the bound
// is passed, the reader keeps a head and a tail of it (enough to recover the
// id of a response, wherever the server put it) and discards the rest up to
// the newline.
//
// Buffers: a line is read in place and handed out without a copy. The first
// buffer (32 KiB) grows by doubling up to 1 MiB; a line past that moves once
// into a region of the bound (see bigRegion), where the rest of it is read.
// After a line past 1 MiB the region's pages go back to the OS before the
// next line is read. From then on a line past 32 KiB goes to the region
// straight.

const (
	initialLineBuf = 32 << 10 // enough for the usual message
	keepLineBuf    = 1 << 20  // a bigger buffer is left once idle, to keep RSS low
	oversizeHead   = 4 << 10
)

// OversizeTail is how many last bytes of an oversized line Frame.Tail keeps,
// and how far from a line's end TailID is worth looking.
const OversizeTail = 512

// Frame is one line read by LineReader.
type Frame struct {
	// Line is the message with its '\n' when it had one. It aliases the
	// reader's buffer and is valid until the next call to Next, and while
	// the reader is in use.
	Line []byte
	// Oversize is set when the line exceeded the bound and was discarded.
	Oversize bool
	Size     int64  // length of the discarded line
	Head     []byte // its first bytes
	Tail     []byte // its last bytes, newline excluded
	// Found is its top-level id, wherever it sat, when the reader looks
	// for ids (see idFinder); FoundRequest/FoundResponse say whether it
	// had a method, or a result or error.
	Found                       []byte
	FoundRequest, FoundResponse bool
}

// LineReader reads bounded lines from r, reusing one buffer.
type LineReader struct {
	// FindIDs follows oversized lines to find their id (Frame.Found).
	FindIDs bool
	// OnShrink, when set, is called after a big line, once the reader has
	// handed back its buffer's memory: what else the big message left
	// behind is the process's to hand back to the OS, not the reader's.
	OnShrink func()

	r          io.Reader
	max        int
	buf        []byte // in use: the usual buffer or big
	small      []byte // the usual buffer, once shrunk back to initialLineBuf
	big        []byte // a region of the bound for big lines, once one came
	bigUsed    int    // how far lines reached in big since it was handed back
	start, end int    // unread data is buf[start:end]
	scanned    int    // buf[start:scanned] holds no newline
	err        error
	tailBuf    []byte
	finder     idFinder
}

// NewLineReader reads lines of at most max bytes (before the newline) from
// r.
func NewLineReader(r io.Reader, max int) *LineReader {
	return &LineReader{r: r, max: max}
}

// Next reads the next line into f. It returns io.EOF (or the read error)
// once no data is left; a last line without a newline is returned first.
func (lr *LineReader) Next(f *Frame) error {
	*f = Frame{}
	lr.shrink()
	for {
		if i := bytes.IndexByte(lr.buf[lr.scanned:lr.end], '\n'); i >= 0 {
			stop := lr.scanned + i + 1
			if line := lr.buf[lr.start : stop-1]; len(line) > lr.max {
				// Over the bound, though its newline was already read.
				f.Oversize, f.Size = true, int64(len(line))
				f.Head = append([]byte(nil), line[:min(oversizeHead, len(line))]...)
				f.Tail = append([]byte(nil), line[len(line)-min(OversizeTail, len(line)):]...)
				lr.find(f, line, true)
				lr.finish(f)
			} else {
				f.Line = lr.buf[lr.start:stop]
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
				f.Line = lr.buf[lr.start:lr.end]
				lr.start, lr.scanned = lr.end, lr.end
				return nil
			}
			return lr.err
		}
		lr.fill()
	}
}

// fill reads more data, compacting or growing the buffer first when full.
func (lr *LineReader) fill() {
	if lr.end == len(lr.buf) {
		lr.makeRoom()
	}
	n, err := lr.r.Read(lr.buf[lr.end:])
	lr.end += n
	lr.noteBigUse()
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
		lr.noteBigUse()
		if err != nil {
			lr.err = err
		} else if n == 0 {
			lr.err = io.ErrNoProgress
		}
	}
}

// makeRoom compacts a full buffer, or moves its data to a bigger one.
func (lr *LineReader) makeRoom() {
	pending := lr.end - lr.start
	limit := lr.max + 1 + initialLineBuf
	dst := lr.buf
	switch {
	case lr.start > 0 && (pending < len(lr.buf)/2 || len(lr.buf) >= limit):
	case lr.big != nil && !lr.inBig():
		// Once there is a region, every line past the first buffer goes
		// there straight, without the doubling steps.
		dst = lr.big
	default:
		size := min(max(initialLineBuf, 2*len(lr.buf)), limit)
		if size > keepLineBuf {
			// A message past 1 MiB is a big one: go straight to the
			// bound instead of doubling, which would copy it again at
			// every step. Pages are touched only as data arrives.
			size = limit
			if lr.big = bigRegion(size); lr.big != nil {
				runtime.AddCleanup(lr, putRegion, lr.big)
				dst = lr.big
				break
			}
		}
		dst = make([]byte, size)
	}
	copy(dst, lr.buf[lr.start:lr.end])
	lr.buf = dst
	lr.scanned -= lr.start
	lr.end = pending
	lr.start = 0
	lr.noteBigUse()
}

// noteBigUse keeps how far into the region lines have reached since its
// pages were last handed back.
func (lr *LineReader) noteBigUse() {
	if lr.inBig() {
		lr.bigUsed = max(lr.bigUsed, lr.end)
	}
}

// inBig reports whether the big buffer is the one in use.
func (lr *LineReader) inBig() bool {
	return lr.big != nil && len(lr.buf) > 0 && &lr.buf[0] == &lr.big[0]
}

// discard drops an oversized line up to its newline, keeping head and tail.
func (lr *LineReader) discard(f *Frame) error {
	f.Oversize = true
	f.Head = append([]byte(nil), lr.buf[lr.start:lr.start+min(oversizeHead, lr.end-lr.start)]...)
	lr.tailBuf = lr.tailBuf[:0]
	chunk := lr.buf[lr.start:lr.end]
	first := true
	for {
		if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
			f.Size += int64(i)
			lr.keepTail(chunk[:i])
			lr.find(f, chunk[:i], first)
			lr.start = lr.end - (len(chunk) - i - 1)
			lr.scanned = lr.start
			break
		}
		f.Size += int64(len(chunk))
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
	f.Tail = append([]byte(nil), lr.tailBuf...)
	return nil
}

// find feeds part of an oversized line to the id finder (from its start
// when first); finish hands the finder's verdict to f.
func (lr *LineReader) find(f *Frame, p []byte, first bool) {
	if !lr.FindIDs {
		return
	}
	if first {
		lr.finder.reset()
	}
	lr.finder.feed(p)
}

func (lr *LineReader) finish(f *Frame) {
	if !lr.FindIDs {
		return
	}
	f.Found = bytes.Clone(lr.finder.found())
	f.FoundRequest, f.FoundResponse = lr.finder.hasMethod, lr.finder.hasResult
}

func (lr *LineReader) keepTail(p []byte) {
	if len(p) >= OversizeTail {
		lr.tailBuf = append(lr.tailBuf[:0], p[len(p)-OversizeTail:]...)
		return
	}
	lr.tailBuf = append(lr.tailBuf, p...)
	if over := len(lr.tailBuf) - OversizeTail; over > 0 {
		lr.tailBuf = append(lr.tailBuf[:0], lr.tailBuf[over:]...)
	}
}

// shrink leaves a buffer grown for a big message once it is idle and hands
// its pages back, so one 16 MiB result does not stay resident for the whole
// session.
func (lr *LineReader) shrink() {
	if len(lr.buf) <= keepLineBuf {
		return
	}
	pending := lr.end - lr.start
	if pending > initialLineBuf {
		return
	}
	if lr.small == nil {
		lr.small = make([]byte, initialLineBuf)
	}
	copy(lr.small, lr.buf[lr.start:lr.end])
	released := true // a heap buffer: the garbage collector hands it back
	if lr.inBig() {
		// Lines that a doubling buffer would have held keep the region's
		// first pages, as that buffer would have stayed; a big one hands
		// all back.
		if released = lr.bigUsed > keepLineBuf; released {
			releaseRegion(lr.big)
			lr.bigUsed = 0
		}
	}
	lr.buf = lr.small
	lr.scanned -= lr.start
	lr.start, lr.end = 0, pending
	if released && lr.OnShrink != nil {
		lr.OnShrink()
	}
}

// RecoverID finds the top-level id of a discarded message in its head, or
// else where the reader found it streaming past, or else in its tail, and
// what kind of message it was, as far as can be told.
func (f *Frame) RecoverID() (raw []byte, escaped, isRequest, isResponse bool) {
	var sc Scanner
	var b Batch
	_ = sc.Scan(f.Head, &b)
	if !b.IsArray && len(b.Msgs) == 1 {
		e := &b.Msgs[0]
		isRequest = e.Method != nil
		isResponse = e.HasResult || e.HasError
		if e.IDKind == IDString || e.IDKind == IDNumber {
			return e.ID(f.Head), e.IDEscaped, isRequest, isResponse
		}
	}
	if f.Found != nil {
		return f.Found, bytes.IndexByte(f.Found, '\\') >= 0, isRequest || f.FoundRequest, isResponse || f.FoundResponse
	}
	if raw = TailID(f.Tail); raw != nil {
		return raw, bytes.IndexByte(raw, '\\') >= 0, isRequest, isResponse
	}
	return nil, false, isRequest, isResponse
}
