package jsonrpc

import (
	"bytes"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// After a big line its buffer's memory goes back to the OS before the next
// line is read, and the relay's hook hears of it once; a line that a
// doubling buffer would have held then keeps at most one huge page.
func TestLineReaderHandsBackBigBufferPages(t *testing.T) {
	big := strings.Repeat("b", 6<<20)
	medium := strings.Repeat("m", 300<<10)
	lr := NewLineReader(&peerFeed{data: []byte(big + "\nsmall\n" + medium + "\nsmall\n")}, 16<<20)
	shrunk := 0
	lr.OnShrink = func() { shrunk++ }
	var f Frame
	if err := lr.Next(&f); err != nil || len(f.Line) != len(big)+1 {
		t.Fatalf("big line: %d bytes, %v", len(f.Line), err)
	}
	region := lr.buf[:len(big)]
	if resident := residentPages(t, region); resident < len(big)/os.Getpagesize()/2 {
		t.Fatalf("only %d pages of the big line resident while it is read", resident)
	}
	for i, c := range []struct {
		line        string
		maxResident int
	}{
		{"small", 0},
		{medium, hugePage / os.Getpagesize()},
		{"small", hugePage / os.Getpagesize()},
	} {
		if err := lr.Next(&f); err != nil || string(f.Line) != c.line+"\n" {
			t.Fatalf("line %d: %d bytes, %v; want %d bytes", i, len(f.Line), err, len(c.line)+1)
		}
		if resident := residentPages(t, region); resident > c.maxResident {
			t.Errorf("after a %d-byte line, %d pages of the big buffer resident, want at most %d", len(c.line), resident, c.maxResident)
		}
	}
	if shrunk != 1 {
		t.Errorf("OnShrink called %d times, want once", shrunk)
	}
}

// peerFeed reads as a pipe from a peer that writes one message at a time:
// at most 64 KiB per read, never past the end of a line.
type peerFeed struct{ data []byte }

func (p *peerFeed) Read(b []byte) (int, error) {
	if len(p.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(b), 64<<10, len(p.data))
	if i := bytes.IndexByte(p.data[:n], '\n'); i >= 0 {
		n = i + 1
	}
	n = copy(b, p.data[:n])
	p.data = p.data[n:]
	return n, nil
}

// residentPages counts the pages wholly inside b that are in memory.
func residentPages(t *testing.T, b []byte) int {
	t.Helper()
	page := os.Getpagesize()
	lo := (page - int(uintptr(unsafe.Pointer(&b[0]))%uintptr(page))) % page
	b = b[lo : lo+(len(b)-lo)/page*page]
	vec := make([]byte, len(b)/page)
	if _, _, errno := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}
