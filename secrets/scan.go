package secrets

import (
	"bytes"
	"regexp"
	"slices"
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
	formats []*format
	anchors [][]byte // every format's anchors, for the look at raw bytes
	always  bool     // a pattern has no fixed prefix: every value is decoded
	// hidable are the ASCII characters of the anchors: a \u escape of one
	// could hide an anchor from the raw look; nonASCII: an anchor holds
	// one beyond ASCII.
	hidable  [128]bool
	nonASCII bool
}

// New returns a Scanner of the default formats and extra.
func New(extra ...Pattern) *Scanner {
	s := &Scanner{formats: slices.Clone(defaults)}
	for _, p := range extra {
		f := &format{name: p.Name, what: "a secret of --secret-pattern " + p.Name, re: p.Re, whole: true}
		if prefix, _ := p.Re.LiteralPrefix(); prefix != "" {
			f.anchors = []string{prefix}
		} else {
			s.always = true
		}
		s.formats = append(s.formats, f)
	}
	for _, f := range s.formats {
		for _, a := range f.anchors {
			s.anchors = append(s.anchors, []byte(a))
			for i := range len(a) {
				if c := a[i]; c < 128 {
					s.hidable[c] = true
				} else {
					s.nonASCII = true
				}
			}
		}
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
	w := walker{formats: s.formats, skip: skip}
	if err := w.walk(value); err != nil {
		return nil, err
	}
	if w.has("aws-access-key-id") {
		aws := walker{formats: []*format{awsSecretKey}, skip: skip, found: w.found}
		if err := aws.walk(value); err != nil {
			return nil, err
		}
		w.found = aws.found
	}
	return w.found, nil
}

// mayHold is the quick look at the raw bytes: whether an anchor is there,
// or an escape that could hide one. Without either no string can hold a
// secret, since each string, decoded, is then a piece of value as is.
func (s *Scanner) mayHold(value []byte) bool {
	for _, a := range s.anchors {
		if bytes.Contains(value, a) {
			return true
		}
	}
	for off := 0; ; {
		i := bytes.IndexByte(value[off:], '\\')
		if i < 0 {
			return false
		}
		i += off
		if i+1 >= len(value) {
			return true // not JSON: let the walk say so
		}
		switch value[i+1] {
		case 'u':
			r, ok := hex4(value[i+2:])
			if !ok || r >= 128 && s.nonASCII || r < 128 && s.hidable[r] {
				return true
			}
			off = i + 6
		case '/':
			if s.hidable['/'] {
				return true
			}
			off = i + 2
		default:
			off = i + 2
		}
	}
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
