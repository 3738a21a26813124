package secrets

import (
	"regexp"
	"strings"
)

// Pattern is one more secret format: a value matching Re anywhere in a
// string is a secret named Name.
type Pattern struct {
	Name string
	Re   *regexp.Regexp
}

// Finding is one secret: where and which format, never the value.
type Finding struct {
	// Path is where, JavaScript's way: arguments.files[2].content,
	// env["API KEY"]; "" for the value itself.
	Path string
	// Secret is the format's name, e.g. "github-token", or a Pattern's.
	Secret string
	// What is the format the user's way, e.g. "a GitHub token".
	What string
	// InName: the secret is in the name of a member of the object at
	// Path (the name itself is never shown), not in a value.
	InName bool
}

// maxFindings bounds what one Scan returns.
const maxFindings = 16

// Scanner finds secrets. Its methods may be called concurrently.
type Scanner struct {
	extra  []*format // the caller's patterns
	always bool      // a pattern has no fixed prefix: every value is decoded
	// hidable are the ASCII characters a \u escape could hide a format's
	// start behind, from the quick look at raw bytes; nonASCII: a
	// pattern's prefix holds one beyond ASCII.
	hidable  [128]bool
	nonASCII bool
}

// New returns a Scanner of the default formats and extra.
func New(extra ...Pattern) *Scanner {
	s := &Scanner{}
	for _, c := range "-_." {
		s.hidable[c] = true
	}
	for c := range 128 {
		s.hidable[c] = s.hidable[c] || isWordByte(byte(c))
	}
	for _, p := range extra {
		f := &format{name: p.Name, what: "a secret of --secret-pattern " + p.Name, re: p.Re}
		if f.anchor, _ = p.Re.LiteralPrefix(); f.anchor == "" {
			s.always = true
		}
		for i := range len(f.anchor) {
			if c := f.anchor[i]; c < 128 {
				s.hidable[c] = true
			} else {
				s.nonASCII = true
			}
		}
		s.extra = append(s.extra, f)
	}
	return s
}

// Scan returns the secrets among value's strings, member names included,
// first in document order first (at most 16). Top-level members named in
// skip are not looked into. value must be JSON; one Scan decodes and
// finds malformed is an error (the quick look decodes nothing).
func (s *Scanner) Scan(value []byte, skip ...string) ([]Finding, error) {
	if !s.always && !s.mayHold(value) {
		return nil, nil
	}
	w := walker{defaults: true, formats: s.extra, skip: skip}
	if err := w.walk(value); err != nil {
		return nil, err
	}
	if w.has(awsKeyID.name) {
		aws := walker{formats: []*format{awsSecretKey}, skip: skip, found: w.found}
		if err := aws.walk(value); err != nil {
			return nil, err
		}
		w.found = aws.found
	}
	return w.found, nil
}

// Holds reports whether str, one string as decoded, holds a secret: for a
// masker that hides such strings wherever they are.
func (s *Scanner) Holds(str string) bool {
	if defaultIn(str) != nil {
		return true
	}
	for _, f := range s.extra {
		if f.in(str) {
			return true
		}
	}
	return false
}

// mayHold is the quick look at the raw bytes: whether a format may start
// there, or an escape could hide where one does. Without either no string
// holds a secret, since each string, decoded, is then a piece of value as
// it is.
func (s *Scanner) mayHold(value []byte) bool {
	raw := unsafeString(value)
	may := false
	candidates(raw, func(f *format, i int) bool {
		// The format's own test of the byte before, unless that byte ends
		// an escape (\n, \u003c), which decodes to no letter.
		may = !f.boundary || i == 0 || !isWordByte(raw[i-1]) || i >= 2 && raw[i-2] == '\\' || i >= 6 && raw[i-6] == '\\'
		return !may
	})
	if may {
		return true
	}
	for _, f := range s.extra {
		if strings.Contains(raw, f.anchor) {
			return true
		}
	}
	for off := 0; ; {
		i := strings.Index(raw[off:], `\u`)
		if i < 0 {
			break
		}
		i += off
		r, ok := hex4(value[i+2:])
		if !ok || r >= 128 && s.nonASCII || r < 128 && s.hidable[r] {
			return true
		}
		off = i + 2
	}
	return s.hidable['/'] && strings.Contains(raw, `\/`)
}

// hex4 reads the four hex digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
