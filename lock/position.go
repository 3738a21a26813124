package lock

import (
	"fmt"
	"unicode/utf8"
)

// Error is a lock that cannot be used as it is, placed in its file:
// "FILE:LINE:COL: what: fix". A lock is never repaired: an edit that made it
// inconsistent must not quietly become a new pin.
type Error struct {
	File      string
	Line, Col int // 1-based; Col counts characters
	What, Fix string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s: %s", e.File, e.Line, e.Col, e.What, e.Fix)
}

// errorAt is an Error at byte offset off of data.
func errorAt(file string, data []byte, off int, what, fix string) *Error {
	off = max(0, min(off, len(data)))
	line, start := 1, 0
	for i, b := range data[:off] {
		if b == '\n' {
			line, start = line+1, i+1
		}
	}
	return &Error{File: file, Line: line, Col: utf8.RuneCount(data[start:off]) + 1, What: what, Fix: fix}
}
