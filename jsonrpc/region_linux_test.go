package jsonrpc

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// After a big line its buffer's memory goes back to the OS before the next
// line is read, and the relay's hook hears of it once.
func TestLineReaderHandsBackBigBufferPages(t *testing.T) {
	big := strings.Repeat("b", 6<<20)
	lr := NewLineReader(strings.NewReader(big+"\nsmall\n"), 16<<20)
	shrunk := 0
	lr.OnShrink = func() { shrunk++ }
	var f Frame
	if err := lr.Next(&f); err != nil || len(f.Line) != len(big)+1 {
		t.Fatalf("big line: %d bytes, %v", len(f.Line), err)
	}
	buf := lr.buf
	if resident := residentPages(t, buf[:len(big)]); resident < len(big)/os.Getpagesize()/2 {
		t.Fatalf("only %d pages of the big line resident while it is read", resident)
	}
	if err := lr.Next(&f); err != nil || string(f.Line) != "small\n" {
		t.Fatalf("small line: %q, %v", f.Line, err)
	}
	if resident := residentPages(t, buf[:len(big)]); resident > 2 {
		t.Errorf("%d pages of the big buffer still resident after the big line", resident)
	}
	if shrunk != 1 {
		t.Errorf("OnShrink called %d times, want once", shrunk)
	}
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
