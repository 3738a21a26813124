package jsonrpc

import (
	"io"
	"strings"
	"testing"
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

func benchRead(b *testing.B, msg string) {
	line := []byte(msg + "\n")
	pr := &pipeFeed{msg: line}
	lr := NewLineReader(pr, 32<<20)
	lr.FindIDs = true
	sc := Scanner{Strict: true}
	var (
		f  Frame
		bt Batch
	)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		pr.off = 0
		if err := lr.Next(&f); err != nil || f.Oversize {
			b.Fatal(err, f.Oversize)
		}
		if err := sc.Scan(f.Line, &bt); err != nil || bt.Msgs[0].Kind != Response {
			b.Fatal(err, bt.Msgs[0].Problem)
		}
	}
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
