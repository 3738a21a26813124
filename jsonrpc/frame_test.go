package jsonrpc

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

func readAll(t *testing.T, r io.Reader, max int) []Frame {
	t.Helper()
	lr := NewLineReader(r, max)
	var out []Frame
	for {
		var f Frame
		err := lr.Next(&f)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		f.Line = bytes.Clone(f.Line)
		out = append(out, f)
	}
}

func TestLineReaderSplitsLines(t *testing.T) {
	in := "a\nbb\r\n\nlast-without-newline"
	for _, r := range []io.Reader{strings.NewReader(in), iotest.OneByteReader(strings.NewReader(in))} {
		fs := readAll(t, r, 1024)
		var got []string
		for _, f := range fs {
			got = append(got, string(f.Line))
		}
		want := []string{"a\n", "bb\r\n", "\n", "last-without-newline"}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("lines %q, want %q", got, want)
		}
	}
}

func TestLineReaderDiscardsOversizedLineAndKeepsGoing(t *testing.T) {
	huge := `{"jsonrpc":"2.0","id":9,"result":"` + strings.Repeat("x", 100_000) + `"}`
	in := "first\n" + huge + "\nnext\n"
	fs := readAll(t, iotest.HalfReader(strings.NewReader(in)), 4096)
	if len(fs) != 3 {
		t.Fatalf("%d frames, want 3", len(fs))
	}
	if string(fs[0].Line) != "first\n" || string(fs[2].Line) != "next\n" {
		t.Errorf("neighbours of the oversized line: %q, %q", fs[0].Line, fs[2].Line)
	}
	f := fs[1]
	if !f.Oversize || f.Size != int64(len(huge)) || f.Line != nil {
		t.Fatalf("oversize=%v size=%d line=%d bytes; want discarded %d bytes", f.Oversize, f.Size, len(f.Line), len(huge))
	}
	if !strings.HasPrefix(huge, string(f.Head)) || !strings.HasSuffix(huge, string(f.Tail)) || len(f.Tail) != OversizeTail {
		t.Errorf("head/tail are not the line's ends: head %q… tail …%q", f.Head[:20], f.Tail)
	}
}

func TestLineReaderOversizedAtEOF(t *testing.T) {
	fs := readAll(t, strings.NewReader(strings.Repeat("y", 10_000)), 1024)
	if len(fs) != 1 || !fs[0].Oversize || fs[0].Size != 10_000 {
		t.Fatalf("frames %+v, want one oversized of 10000 bytes", fs)
	}
}

func TestLineReaderLineOfExactlyMax(t *testing.T) {
	line := strings.Repeat("z", 5000)
	fs := readAll(t, strings.NewReader(line+"\n"+line+"z\n"), 5000)
	if len(fs) != 2 || fs[0].Oversize || len(fs[0].Line) != 5001 || !fs[1].Oversize {
		t.Fatalf("max-length line must pass and max+1 must not: %d frames", len(fs))
	}
}

// A bounded reader must not hold an oversized line whole: memory stays near
// the bound however long the line is.
func TestLineReaderDoesNotBufferOversizedLine(t *testing.T) {
	lr := NewLineReader(io.MultiReader(&repeatReader{n: 64 << 20}, strings.NewReader("\nok\n")), 1<<20)
	var f Frame
	if err := lr.Next(&f); err != nil || !f.Oversize || f.Size != 64<<20 {
		t.Fatalf("err=%v oversize=%v size=%d", err, f.Oversize, f.Size)
	}
	if cap(lr.buf) > 2<<20 {
		t.Errorf("buffer grew to %d bytes for a 1 MiB bound", cap(lr.buf))
	}
	if err := lr.Next(&f); err != nil || string(f.Line) != "ok\n" {
		t.Errorf("after the oversized line: %q, %v", f.Line, err)
	}
}

func TestLineReaderShrinksAfterBigLine(t *testing.T) {
	big := strings.Repeat("b", 4<<20)
	lr := NewLineReader(strings.NewReader(big+"\nsmall\n"), 16<<20)
	var f Frame
	if err := lr.Next(&f); err != nil || len(f.Line) != len(big)+1 {
		t.Fatalf("big line: %d bytes, %v", len(f.Line), err)
	}
	if err := lr.Next(&f); err != nil || string(f.Line) != "small\n" {
		t.Fatalf("small line: %q, %v", f.Line, err)
	}
	if cap(lr.buf) > keepLineBuf {
		t.Errorf("buffer of %d bytes kept after the big line", cap(lr.buf))
	}
}

func TestLineReaderReportsReadErrors(t *testing.T) {
	boom := errors.New("boom")
	lr := NewLineReader(io.MultiReader(strings.NewReader("a\n"), iotest.ErrReader(boom)), 1024)
	var f Frame
	if err := lr.Next(&f); err != nil {
		t.Fatal(err)
	}
	if err := lr.Next(&f); !errors.Is(err, boom) {
		t.Errorf("error %v, want boom", err)
	}
}

type repeatReader struct{ n int }

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	n := min(len(p), r.n)
	for i := range p[:n] {
		p[i] = 'r'
	}
	r.n -= n
	return n, nil
}

// chunkReader hands out its data in reads of varying sizes, as pipes do.
type chunkReader struct {
	data []byte
	r    *rand.Rand
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 1+c.r.IntN(96<<10))], c.data)
	c.data = c.data[n:]
	return n, nil
}

// Big and small lines in any order come out byte for byte, though the big
// buffer's pages are handed back (and read as zeros) between big lines.
func TestLineReaderBigAndSmallLinesInAnyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var in []byte
	var want [][]byte
	for i := range 40 {
		size := 1 + r.IntN(100)
		switch r.IntN(3) {
		case 0:
			size = 1<<20 + r.IntN(3<<20) // past the usual buffer
		case 1:
			size = 20<<10 + r.IntN(60<<10) // around its first size
		}
		line := make([]byte, size, size+1)
		for j := range line {
			line[j] = byte('a' + (i+j)%26)
		}
		line = append(line, '\n')
		in = append(in, line...)
		want = append(want, line)
	}
	lr := NewLineReader(&chunkReader{data: in, r: r}, 8<<20)
	var f Frame
	for i, w := range want {
		if err := lr.Next(&f); err != nil || f.Oversize {
			t.Fatalf("line %d: %v, oversize %v", i, err, f.Oversize)
		}
		if !bytes.Equal(f.Line, w) {
			t.Fatalf("line %d (%d bytes) differs from what was sent (%d bytes)", i, len(f.Line), len(w))
		}
	}
	if err := lr.Next(&f); err != io.EOF {
		t.Fatalf("after the last line: %v", err)
	}
}

// A big line after the first is not allocated again: the region it is read
// into is kept (its pages handed back) instead of made and zeroed anew.
func TestLineReaderBigLinesReuseTheirBuffer(t *testing.T) {
	line := []byte(strings.Repeat("r", 3<<20) + "\n")
	feed := &pipeFeed{msg: line}
	lr := NewLineReader(feed, 8<<20)
	var f Frame
	read := func() {
		feed.off = 0
		if err := lr.Next(&f); err != nil || len(f.Line) != len(line) {
			t.Fatalf("%d bytes, %v", len(f.Line), err)
		}
	}
	read()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 5 {
		read()
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / 5; per > 64<<10 {
		t.Errorf("%d bytes allocated per %d-byte line", per, len(line))
	}
}
