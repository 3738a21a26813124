package scan

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/norm"
)

// normalize is the text the word rules read: what a model reads rather
// than what a reader sees. Tag characters become the ASCII they spell,
// other invisible characters go, compatibility forms (fullwidth, bold
// letters) and non-Latin lookalikes (Cyrillic і for i) become their
// ASCII letters, letters are lower case and every run of spaces is one
// space. So "<ＩＭＰＯＲＴＡＮＴ>", "ig\u200bnore" and "Ignore   all" match
// as written plainly.
func normalize(s string) string {
	var b strings.Builder
	space := false
	if !isASCII(s) {
		s = norm.NFKC.String(s)
	}
	for _, r := range s {
		switch {
		case isTag(r):
			if a := r - tagFirst; a >= 0x20 && a <= 0x7E {
				r = a
			} else {
				continue
			}
		case hidden(r):
			continue
		case r >= utf8.RuneSelf:
			if sk := confusables.Skeleton(string(r)); len(sk) == 1 && sk[0] < utf8.RuneSelf {
				r = rune(sk[0])
			}
		}
		if unicode.IsSpace(r) {
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
