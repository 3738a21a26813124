package jsonrpc

import (
	"math/rand/v2"
	"testing"
)

// The word-at-a-time skips must stop exactly where a byte loop does, for
// every byte value at every place in a word and a 32-byte step, next to any
// neighbour (the borrow tricks depend on neighbours).
func TestSkipPlainStopsWhereAByteLoopDoes(t *testing.T) {
	stops := func(c byte, ascii bool) bool { return c == '"' || c == '\\' || c < 0x20 || (ascii && c >= 0x80) }
	want := func(b []byte, ascii bool) int {
		for i, c := range b {
			if stops(c, ascii) {
				return i
			}
		}
		return len(b)
	}
	check := func(b []byte) {
		t.Helper()
		if got, w := skipPlain(b, 0), want(b, false); got != w {
			t.Fatalf("skipPlain(%q) = %d, want %d", b, got, w)
		}
		if got, w := skipPlainASCII(b, 0), want(b, true); got != w {
			t.Fatalf("skipPlainASCII(%q) = %d, want %d", b, got, w)
		}
	}
	buf := make([]byte, 80)
	for v := range 256 {
		for pos := range 70 {
			for _, fill := range []byte{'a', 0x7f, 0xff, 0x80, 0x20, '"' + 1, '\\' + 1} {
				for i := range buf {
					buf[i] = fill
				}
				buf[pos] = byte(v)
				check(buf[:pos+1])
				check(buf)
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := buf[:r.IntN(len(buf))]
		for i := range b {
			b[i] = byte(0x20 + r.IntN(0x60)) // plain ASCII mostly
			if r.IntN(16) == 0 {
				b[i] = byte(r.IntN(256))
			}
		}
		check(b)
	}
}
