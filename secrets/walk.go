package secrets

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds nesting as encoding/json does.
const maxDepth = 10000

// walker decodes a JSON value's strings, keeping the path to each.
type walker struct {
	defaults bool      // look for the default formats
	formats  []*format // and these
	skip     []string  // top-level members not looked into
	path     []byte
	buf      []byte // the string being decoded
	found    []Finding
	depth    int
}

func (w *walker) has(name string) bool {
	for _, f := range w.found {
		if f.Secret == name {
			return true
		}
	}
	return false
}

func (w *walker) walk(v []byte) error {
	i, err := w.value(v, space(v, 0))
	if err == nil && space(v, i) != len(v) {
		err = fmt.Errorf("offset %d: more after the value", i)
	}
	return err
}

// value walks the value at v[i:], returning where it ends.
func (w *walker) value(v []byte, i int) (int, error) {
	if i >= len(v) {
		return i, errors.New("unexpected end")
	}
	switch v[i] {
	case '{':
		return w.object(v, i)
	case '[':
		return w.array(v, i)
	case '"':
		s, end, err := w.str(v, i)
		if err == nil {
			w.check(s, false)
		}
		return end, err
	}
	j := i
	for j < len(v) && !endsScalar(v[j]) {
		j++
	}
	if j == i {
		return i, fmt.Errorf("offset %d: %q where a value belongs", i, v[i])
	}
	return j, nil
}

func (w *walker) enter(i int) error {
	if w.depth++; w.depth > maxDepth {
		return fmt.Errorf("offset %d: nested deeper than %d", i, maxDepth)
	}
	return nil
}

func (w *walker) object(v []byte, i int) (int, error) {
	if err := w.enter(i); err != nil {
		return i, err
	}
	top := w.depth == 1
	i = space(v, i+1)
	if i < len(v) && v[i] == '}' {
		w.depth--
		return i + 1, nil
	}
	for {
		if i >= len(v) || v[i] != '"' {
			return i, fmt.Errorf("offset %d: want a member name", i)
		}
		name, end, err := w.str(v, i)
		if err != nil {
			return end, err
		}
		secretName := w.check(name, true)
		if i = space(v, end); i >= len(v) || v[i] != ':' {
			return i, fmt.Errorf("offset %d: want ':'", i)
		}
		mark := len(w.path)
		if top && skipped(w.skip, name) {
			i, err = (&walker{}).value(v, space(v, i+1)) // still checked for shape
		} else {
			if secretName {
				name = "<secret>" // never the name in a path
			}
			w.path = appendName(w.path, name)
			i, err = w.value(v, space(v, i+1))
		}
		w.path = w.path[:mark]
		if err != nil {
			return i, err
		}
		var done bool
		if i, done, err = w.separator(v, i, '}'); done || err != nil {
			return i, err
		}
	}
}

func (w *walker) array(v []byte, i int) (int, error) {
	if err := w.enter(i); err != nil {
		return i, err
	}
	i = space(v, i+1)
	if i < len(v) && v[i] == ']' {
		w.depth--
		return i + 1, nil
	}
	for n := 0; ; n++ {
		mark := len(w.path)
		w.path = strconv.AppendInt(append(w.path, '['), int64(n), 10)
		w.path = append(w.path, ']')
		var err error
		i, err = w.value(v, i)
		w.path = w.path[:mark]
		if err != nil {
			return i, err
		}
		var done bool
		if i, done, err = w.separator(v, i, ']'); done || err != nil {
			return i, err
		}
	}
}

// separator reads what follows a member or an element: a ',' (more come)
// or the container's close (done, and the walk is out of it).
func (w *walker) separator(v []byte, i int, close byte) (next int, done bool, err error) {
	switch i = space(v, i); {
	case i < len(v) && v[i] == ',':
		return space(v, i+1), false, nil
	case i < len(v) && v[i] == close:
		w.depth--
		return i + 1, true, nil
	}
	return i, false, fmt.Errorf("offset %d: want ',' or '%c'", i, close)
}

// check records the first format s holds, reporting whether it holds one.
func (w *walker) check(s string, inName bool) bool {
	var found *format
	if w.defaults {
		found = defaultIn(s)
	}
	for _, f := range w.formats {
		if found != nil {
			break
		}
		if f.in(s) {
			found = f
		}
	}
	if f := found; f != nil {
		{
			if len(w.found) < maxFindings {
				w.found = append(w.found, Finding{Path: string(w.path), Secret: f.name, What: f.what, InName: inName})
			}
			return true
		}
	}
	return false
}

// str decodes the string at v[i] (a quote), returning it and where it
// ends. The string is w.buf's or v's own bytes: valid until the next call.
func (w *walker) str(v []byte, i int) (string, int, error) {
	start := i + 1
	end := start
	for {
		j := bytes.IndexByte(v[end:], '"')
		if j < 0 {
			return "", len(v), fmt.Errorf("offset %d: unterminated string", i)
		}
		end += j
		if !escapedQuote(v[start:end]) {
			break
		}
		end++
	}
	raw := v[start:end]
	if bytes.IndexByte(raw, '\\') < 0 {
		return unsafeString(raw), end + 1, nil
	}
	var err error
	if w.buf, err = unescape(w.buf[:0], raw); err != nil {
		return "", end + 1, fmt.Errorf("offset %d: %v", i, err)
	}
	return unsafeString(w.buf), end + 1, nil
}

// escapedQuote reports whether the quote after s is escaped: s ends in an
// odd run of backslashes.
func escapedQuote(s []byte) bool {
	n := 0
	for n < len(s) && s[len(s)-1-n] == '\\' {
		n++
	}
	return n%2 == 1
}

// unescape appends the decoded form of a JSON string's body, as
// encoding/json decodes it (a lone surrogate is U+FFFD).
func unescape(dst, s []byte) ([]byte, error) {
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			return append(dst, s...), nil
		}
		dst = append(dst, s[:i]...)
		if s = s[i:]; len(s) < 2 {
			return dst, errors.New("a lone backslash")
		}
		switch c := s[1]; c {
		case '"', '\\', '/':
			dst = append(dst, c)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(s[2:])
			if !ok {
				return dst, errors.New(`a \u escape without four hex digits`)
			}
			s = s[6:]
			if utf16.IsSurrogate(r) {
				r2, ok := rune(0), false
				if len(s) >= 6 && s[0] == '\\' && s[1] == 'u' {
					r2, ok = hex4(s[2:])
				}
				if d := utf16.DecodeRune(r, r2); ok && d != utf8.RuneError {
					r, s = d, s[6:]
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default:
			return dst, fmt.Errorf("an escape \\%c JSON has not", c)
		}
		s = s[2:]
	}
	return dst, nil
}

// appendName appends a member's path step: .name, or ["name"] for a name
// that is no identifier. A long name is cut: a path is for a message.
func appendName(path []byte, name string) []byte {
	if isIdentifier(name) && len(name) <= 64 {
		if len(path) > 0 {
			path = append(path, '.')
		}
		return append(path, name...)
	}
	if len(name) > 64 {
		cut := 64
		for cut > 0 && !utf8.RuneStart(name[cut]) {
			cut--
		}
		name = name[:cut] + "…"
	}
	path = append(path, '[')
	path = strconv.AppendQuote(path, name)
	return append(path, ']')
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if !(c == '_' || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

func skipped(skip []string, name string) bool {
	for _, s := range skip {
		if s == name {
			return true
		}
	}
	return false
}

func endsScalar(c byte) bool {
	return c == ',' || c == ']' || c == '}' || c == ' ' || c == '\t' || c == '\r' || c == '\n'
}

// space skips JSON whitespace from i.
func space(v []byte, i int) int {
	for i < len(v) && (v[i] == ' ' || v[i] == '\t' || v[i] == '\n' || v[i] == '\r') {
		i++
	}
	return i
}
