package diagnose

import (
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/norm"
)

// Whether a line reads, to the eye, as beginning "mcpsandbox": its first
// letters and digits, whatever stands between them, in their
// compatibility form (NFKC: fullwidth, circled, bold letters), compared by
// their skeletons (Unicode's confusables, UTS #39: Cyrillic с for c, 0 for
// o, rn for m), in any case.

// isLineBreak: what starts a new line for a reader.
func isLineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

// lineHead gathers the first letters and digits of a line: what it reads
// as, whatever stands between them.
type lineHead struct {
	kept  [16]rune
	n     int
	done  bool
	ours  bool
	mixed bool   // a letter kept is not ASCII: kept decides, at its end
	pos   [2]int // while all are ASCII: how much of ourSkeleton each fold matched (-1: it does not)
}

// add takes the next rune of the line; true once the head is decided.
func (h *lineHead) add(r rune) bool {
	if h.done {
		return true
	}
	if r < utf8.RuneSelf {
		h.keep(r)
		return h.done
	}
	// Its compatibility form (fullwidth, circled, bold letters), without
	// allocating.
	var buf [utf8.UTFMax]byte
	d := norm.NFKC.Properties(buf[:utf8.EncodeRune(buf[:], r)]).Decomposition()
	if d == nil {
		h.keep(r)
		return h.done
	}
	for len(d) > 0 && !h.done {
		k, size := utf8.DecodeRune(d)
		h.keep(k)
		d = d[size:]
	}
	return h.done
}

// keep takes a rune of the line's compatibility form: its letters and
// digits are what the line reads as.
func (h *lineHead) keep(k rune) {
	if !unicode.IsLetter(k) && !unicode.IsNumber(k) {
		return
	}
	if k < utf8.RuneSelf && !h.mixed {
		h.keepASCII(k)
	} else if h.mixed = true; h.n == 0 && !mayBeginOurs(k) {
		h.done = true
		return
	}
	if h.done {
		return
	}
	h.kept[h.n] = k
	if h.n++; h.n == len(h.kept) {
		h.ours, h.done = readsAsOurs(h.kept[:]), true
	}
}

// keepASCII matches an ASCII letter or digit against ourSkeleton, both
// ways readsAsOurs folds: most lines are decided at their first letter,
// without a skeleton taken.
func (h *lineHead) keepASCII(k rune) {
	folds := asciiFolds()
	for o := range h.pos {
		if h.pos[o] < 0 {
			continue
		}
		f, rest := folds[o][k], ourSkeleton[h.pos[o]:]
		switch {
		case len(f) >= len(rest) && strings.HasPrefix(f, rest):
			h.ours, h.done = true, true
			return
		case strings.HasPrefix(rest, f):
			h.pos[o] += len(f)
		default:
			h.pos[o] = -1
		}
	}
	h.done = h.pos[0] < 0 && h.pos[1] < 0
}

// asciiFolds are the folds of each ASCII letter and digit, lower-cased
// before and after its skeleton is taken, as readsAsOurs folds.
var asciiFolds = sync.OnceValue(func() *[2][utf8.RuneSelf]string {
	var t [2][utf8.RuneSelf]string
	for c := rune(0); c < utf8.RuneSelf; c++ {
		s := string(c)
		t[0][c], t[1][c] = fold(confusables.Skeleton(strings.ToLower(s))), fold(confusables.Skeleton(s))
	}
	return &t
})

// mayBeginOurs reports whether a line beginning with letter k may read
// as "mcpsandbox".
func mayBeginOurs(k rune) bool {
	if v, ok := beginnings.Load(k); ok {
		return v.(bool)
	}
	s := string(k)
	may := strings.HasPrefix(fold(confusables.Skeleton(strings.ToLower(s))), ourSkeleton[:1]) ||
		strings.HasPrefix(fold(confusables.Skeleton(s)), ourSkeleton[:1])
	if beginningsHeld.Add(1) <= maxBeginnings {
		beginnings.Store(k, may)
	}
	return may
}

// beginnings remembers mayBeginOurs of the letters lines began with (a
// text's alphabet is small), up to maxBeginnings of them whatever the
// servers write.
var (
	beginnings     sync.Map // rune → bool
	beginningsHeld atomic.Int64
)

const maxBeginnings = 4096

// passes reports whether the line read so far begins "mcpsandbox".
func (h *lineHead) passes() bool {
	if !h.done {
		h.ours, h.done = h.mixed && readsAsOurs(h.kept[:h.n]), true
	}
	return h.ours
}

// ourSkeleton is "mcpsandbox" as readsAsOurs folds it.
var ourSkeleton = fold(confusables.Skeleton("mcpsandbox"))

// readsAsOurs reports whether letters read as "mcpsandbox", lower-cased
// before or after their skeleton is taken.
func readsAsOurs(letters []rune) bool {
	if len(letters) < 5 { // no letter's skeleton is more than two of ours
		return false
	}
	s := string(letters)
	return strings.HasPrefix(fold(confusables.Skeleton(strings.ToLower(s))), ourSkeleton) ||
		strings.HasPrefix(fold(confusables.Skeleton(s)), ourSkeleton)
}

// fold lower-cases a skeleton and keeps its letters and digits (a
// skeleton is decomposed: accents are marks of their own). ʍ, the
// skeleton of Cyrillic м, reads as m in running text.
func fold(s string) string {
	s = strings.ReplaceAll(strings.ToLower(s), "ʍ", "rn")
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			return r
		}
		return -1
	}, s)
}
