package main

import (
	"fmt"
	"io"
	"strings"
	"unicode"
)

// visibleWriter shows what the pins commands print from a lock with every
// invisible character spelt out: a server's text is the attacker's, and a
// review that a zero-width, bidi or tag character can hide text from is no
// review. Each Write is whole runes (fmt writes whole strings).
type visibleWriter struct{ w io.Writer }

func (v visibleWriter) Write(b []byte) (int, error) {
	_, err := io.WriteString(v.w, visible(string(b)))
	return len(b), err
}

// visible spells out control, format (zero-width, bidi, tag), private and
// unassigned characters as Go escapes, \u200b and \U000e0049, as the
// contract's Render does.
func visible(s string) string {
	if strings.IndexFunc(s, hidden) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !hidden(r):
			b.WriteRune(r)
		case r > 0xFFFF:
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

func hidden(r rune) bool {
	if r == '\n' || r == '\t' || r == ' ' {
		return false
	}
	return !unicode.IsGraphic(r) || unicode.In(r, unicode.Cf, unicode.Co)
}
