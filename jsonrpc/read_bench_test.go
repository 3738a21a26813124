package jsonrpc

import (
	"io"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"
)

// What a relay's read loop costs per server message: the line reader and
// the strict scan together, fed the way a pipe feeds them (at most 64 KiB
// per read, never past the end of the message the peer has written).
//
//	go test ./jsonrpc -run '^$' -bench Read
func BenchmarkRead1KiB(b *testing.B) {
	benchRead(b, `{"jsonrpc":"2.0","id":17,"result":{"content":[{"type":"text","text":"`+strings.Repeat("a", 1024)+`"}]}}`)
}

func BenchmarkRead16MiBResult(b *testing.B) {
	benchRead(b, `{"jsonrpc":"2.0","id":17,"result":{"content":[{"type":"text","text":"`+strings.Repeat("x", 16<<20-100)+`"}]}}`)
}

// A tools/list-sized answer, in a session that has carried a big result.
func BenchmarkRead256KiBAfterBig(b *testing.B) {
	benchRead(b, `{"jsonrpc":"2.0","id":17,"result":{"tools":[{"name":"`+strings.Repeat("t", 256<<10)+`"}]}}`, strings.Repeat("x", 4<<20))
}

// benchRead reads msg again and again, after the lines before (not timed).
func benchRead(b *testing.B, msg string, before ...string) {
	line := []byte(msg + "\n")
	pr := &pipeFeed{msg: line}
	lr := NewLineReader(pr, 32<<20)
	for _, l := range before {
		pr.msg, pr.off = []byte(l+"\n"), 0
		var f Frame
		if err := lr.Next(&f); err != nil {
			b.Fatal(err)
		}
	}
	pr.msg = line
	lr.FindIDs = true
	// As the relay does, between big results that come further apart than
	// its 200 ms delay: the memory goes back to the OS, and the next big
	// line pays for fresh pages.
	lr.OnShrink = debug.FreeOSMemory
	sc := Scanner{Strict: true}
	var (
		f  Frame
		bt Batch
	)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		pr.off = 0
		if err := lr.Next(&f); err != nil || f.Oversize {
			b.Fatal(err, f.Oversize)
		}
		if err := sc.Scan(f.Line, &bt); err != nil || bt.Msgs[0].Kind != Response {
			b.Fatal(err, bt.Msgs[0].Problem)
		}
	}
	// The process's CPU time (GC included) varies less than wall time on
	// a shared machine.
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pipeFeed hands out one message per round, as a pipe does from a peer that
// writes a message and waits for the next request.
type pipeFeed struct {
	msg []byte
	off int
}

func (p *pipeFeed) Read(b []byte) (int, error) {
	if p.off == len(p.msg) {
		return 0, io.ErrNoProgress // the benchmark reads exactly one line per round
	}
	n := copy(b[:min(len(b), 64<<10)], p.msg[p.off:])
	p.off += n
	return n, nil
}
