package scan

import (
	"fmt"
	"strings"
	"unicode"
)

// Characters a reader does not see but a model reads (or that reorder what
// a reader sees): the means of hiding text in plain sight.
const (
	tagFirst, tagLast = 0xE0000, 0xE007F // Unicode tag characters: ASCII spelled invisibly
	tagCancel         = 0xE007F
	blackFlag         = 0x1F3F4 // starts the one honest use of tags: subdivision flags
)

// bidiNames are the bidirectional embeddings, overrides and isolates:
// they make the text shown differ from the text read (Trojan Source).
var bidiNames = map[rune]string{
	0x202A: "left-to-right embedding", 0x202B: "right-to-left embedding", 0x202C: "pop directional formatting",
	0x202D: "left-to-right override", 0x202E: "right-to-left override",
	0x2066: "left-to-right isolate", 0x2067: "right-to-left isolate", 0x2068: "first strong isolate", 0x2069: "pop directional isolate",
}

// invisibleNames are zero-width and other invisible characters; hidden
// is false for the marks right-to-left text uses honestly (medium).
var invisibleNames = map[rune]struct {
	name   string
	hidden bool
}{
	0x200B: {"zero width space", true}, 0x200C: {"zero width non-joiner", true}, 0x200D: {"zero width joiner", true},
	0x2060: {"word joiner", true}, 0x2061: {"function application", true}, 0x2062: {"invisible times", true},
	0x2063: {"invisible separator", true}, 0x2064: {"invisible plus", true}, 0xFEFF: {"byte order mark", true},
	0x180E: {"mongolian vowel separator", true}, 0x034F: {"combining grapheme joiner", true},
	0x115F: {"hangul choseong filler", true}, 0x1160: {"hangul jungseong filler", true}, 0x3164: {"hangul filler", true}, 0xFFA0: {"halfwidth hangul filler", true},
	0x200E: {"left-to-right mark", false}, 0x200F: {"right-to-left mark", false}, 0x061C: {"arabic letter mark", false}, 0x00AD: {"soft hyphen", false},
}

func isTag(r rune) bool { return r >= tagFirst && r <= tagLast }
func isVariationSelector(r rune) bool {
	return r >= 0xFE00 && r <= 0xFE0F || r >= 0xE0100 && r <= 0xE01EF
}

// hidden reports whether r is one of the characters this file is about.
func hidden(r rune) bool {
	if r < 0xAD { // the soft hyphen is the first
		return false
	}
	_, bidi := bidiNames[r]
	_, inv := invisibleNames[r]
	return bidi || inv || isTag(r) || isVariationSelector(r)
}

// invisibleFindings looks at one string for tag characters, bidi controls
// and invisible characters: one finding per kind, with the first place
// shown.
func invisibleFindings(path, s string) []Finding {
	if isASCII(s) {
		return nil
	}
	rs := []rune(s)
	var tagRuns []string
	var tagCount int
	bidi := newTally()
	inv := newTally()
	invSeverity := Medium
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case isTag(r):
			j := i
			for j < len(rs) && isTag(rs[j]) {
				j++
			}
			if !flagSequence(rs, i, j) {
				tagRuns = append(tagRuns, decodeTags(rs[i:j]))
				tagCount += j - i
			}
			i = j - 1
		case bidiNames[r] != "":
			bidi.add(rs, i, bidiNames[r])
		case isVariationSelector(r):
			j := i
			for j < len(rs) && isVariationSelector(rs[j]) {
				j++
			}
			if j-i > 1 || !honestVariation(rs, i) {
				inv.add(rs, i, fmt.Sprintf("%d variation selectors, which can carry hidden bytes", j-i))
				invSeverity = High
			}
			i = j - 1
		default:
			c, ok := invisibleNames[r]
			if !ok || honestJoiner(rs, i) {
				continue
			}
			if r == 0xFEFF && i == 0 {
				inv.add(rs, i, "byte order mark at the start")
				continue
			}
			inv.add(rs, i, c.name)
			if c.hidden {
				invSeverity = High
			}
		}
	}
	var out []Finding
	if len(tagRuns) > 0 {
		out = append(out, Finding{High, RuleTagText, path,
			fmt.Sprintf("hides text in %d Unicode tag characters (U+E0000–U+E007F), invisible to a reader but read by the model: %s",
				tagCount, clip(strings.Join(tagRuns, " | "), 120))})
	}
	if bidi.n > 0 {
		out = append(out, Finding{High, RuleBidi, path,
			fmt.Sprintf("holds %s, which reorder what a reader sees against what the model reads: %s", bidi.summary("bidi control"), bidi.context)})
	}
	if inv.n > 0 {
		if inv.n == 1 && inv.first == "byte order mark at the start" {
			invSeverity = Low
		}
		out = append(out, Finding{invSeverity, RuleInvisible, path,
			fmt.Sprintf("holds %s, which hide text from a reader: %s", inv.summary("invisible character"), inv.context)})
	}
	return out
}

// tally counts one kind of character in a string and keeps the first
// place it was seen, shown printably.
type tally struct {
	n       int
	first   string
	context string
	codes   []string
}

func newTally() *tally { return &tally{} }

func (t *tally) add(rs []rune, i int, name string) {
	t.n++
	code := fmt.Sprintf("U+%04X %s", rs[i], name)
	if t.n == 1 {
		t.first = name
		t.context = around(rs, i)
	}
	if len(t.codes) < 4 && !contains(t.codes, code) {
		t.codes = append(t.codes, code)
	}
}

func (t *tally) summary(what string) string {
	plural := ""
	if t.n > 1 {
		plural = "s"
	}
	return fmt.Sprintf("%d %s%s (%s)", t.n, what, plural, strings.Join(t.codes, ", "))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// decodeTags spells a run of tag characters as the ASCII it hides, quoted;
// a tag outside U+E0020–U+E007E is shown as its code.
func decodeTags(run []rune) string {
	var b strings.Builder
	for _, r := range run {
		if a := r - tagFirst; a >= 0x20 && a <= 0x7E {
			b.WriteRune(a)
		} else {
			fmt.Fprintf(&b, "<U+%04X>", r)
		}
	}
	return fmt.Sprintf("%q", b.String())
}

// flagSequence: tags rs[i:j] spell a subdivision flag (🏴 then lowercase
// letters and digits, then the cancel tag), as England's.
func flagSequence(rs []rune, i, j int) bool {
	if i == 0 || rs[i-1] != blackFlag || j-i < 3 || j-i > 8 || rs[j-1] != tagCancel {
		return false
	}
	for _, r := range rs[i : j-1] {
		if a := r - tagFirst; !(a >= 'a' && a <= 'z' || a >= '0' && a <= '9') {
			return false
		}
	}
	return true
}

// honestJoiner: a zero-width (non-)joiner between two letters or symbols
// of a non-Latin script or emoji, where it shapes what is shown.
func honestJoiner(rs []rune, i int) bool {
	if rs[i] != 0x200D && rs[i] != 0x200C {
		return false
	}
	beside := func(r rune) bool {
		return r > unicode.MaxLatin1 && (unicode.IsGraphic(r) || isVariationSelector(r)) && !hidden(r) || r == 0xFE0F
	}
	return i > 0 && i+1 < len(rs) && beside(rs[i-1]) && beside(rs[i+1])
}

// honestVariation: one variation selector after a character it selects a
// form of (an emoji, a keycap digit, an ideograph).
func honestVariation(rs []rune, i int) bool {
	if i == 0 {
		return false
	}
	prev := rs[i-1]
	if rs[i] >= 0xE0100 {
		return unicode.Is(unicode.Han, prev)
	}
	return prev > unicode.MaxLatin1 && !hidden(prev) || prev >= '0' && prev <= '9' || prev == '#' || prev == '*'
}

// around is the text about rs[i], printable and quoted.
func around(rs []rune, i int) string {
	const span = 20
	from, to := max(i-span, 0), min(i+span+1, len(rs))
	s := printable(string(rs[from:to]))
	if from > 0 {
		s = "…" + s
	}
	if to < len(rs) {
		s += "…"
	}
	return `"` + s + `"`
}

// printable writes every character a reader would not see, and every
// control, as <U+XXXX>; line breaks and tabs as \n and \t.
func printable(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '"':
			b.WriteString(`\"`)
		case hidden(r) || r != ' ' && !unicode.IsGraphic(r) || unicode.In(r, unicode.Cf, unicode.Co):
			fmt.Fprintf(&b, "<U+%04X>", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// clip shortens s to n runes, marking the cut.
func clip(s string, n int) string {
	rs := []rune(s)
	if len(rs) <= n {
		return s
	}
	return string(rs[:n]) + "…"
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
