package jsonrpc

import "encoding/binary"

// Most bytes of a big message sit in long strings, so skipping the plain
// bytes of a string is the scanner's hot loop. It tests eight bytes per word
// (SWAR) and four words per step, with one branch per 32 bytes.

const (
	laneLo    = 0x0101010101010101
	laneHi    = 0x8080808080808080
	laneQuote = 0x2222222222222222
	laneBslsh = 0x5c5c5c5c5c5c5c5c
	laneSpace = 0x2020202020202020
)

// mayStop sets the high bit of every byte of x that is '"', '\\' or a
// control character, and of no byte of 0x80 and above; a plain byte right
// above one of those may be flagged too (a borrow), never one below.
func mayStop(x uint64) uint64 {
	q, k := x^laneQuote, x^laneBslsh
	return ((q-laneLo)&^q | (k-laneLo)&^k | (x-laneSpace)&^x) & laneHi
}

// mayStopASCII is mayStop that flags bytes of 0x80 and above as well. That
// lets it drop the masks mayStop needs to keep them out: a byte that wraps
// or borrows here is special itself or sits above one that is.
func mayStopASCII(x uint64) uint64 {
	q, k := (x^laneQuote)-laneLo, (x^laneBslsh)-laneLo
	return (q | k | (x - laneSpace) | x) & laneHi
}

// skipPlain returns the index of the first '"', '\\' or control character at
// or after i.
func skipPlain(b []byte, i int) int {
	for ; i+32 <= len(b); i += 32 {
		w := b[i : i+32 : i+32]
		if mayStop(binary.LittleEndian.Uint64(w[0:8]))|
			mayStop(binary.LittleEndian.Uint64(w[8:16]))|
			mayStop(binary.LittleEndian.Uint64(w[16:24]))|
			mayStop(binary.LittleEndian.Uint64(w[24:32])) != 0 {
			break
		}
	}
	for ; i+8 <= len(b); i += 8 {
		if mayStop(binary.LittleEndian.Uint64(b[i:i+8])) != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return i
}

// skipPlainASCII is skipPlain that also stops at bytes of 0x80 and above,
// for strict scans to validate UTF-8 there; ASCII text keeps the fast path.
func skipPlainASCII(b []byte, i int) int {
	for ; i+32 <= len(b); i += 32 {
		w := b[i : i+32 : i+32]
		if mayStopASCII(binary.LittleEndian.Uint64(w[0:8]))|
			mayStopASCII(binary.LittleEndian.Uint64(w[8:16]))|
			mayStopASCII(binary.LittleEndian.Uint64(w[16:24]))|
			mayStopASCII(binary.LittleEndian.Uint64(w[24:32])) != 0 {
			break
		}
	}
	for ; i+8 <= len(b); i += 8 {
		if mayStopASCII(binary.LittleEndian.Uint64(b[i:i+8])) != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			return i
		}
	}
	return i
}
