package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"path"
	"strconv"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/secrets"
)

// What the audit log keeps of a call's arguments: the values of keys that
// look secret replaced by "***" at every depth, secrets inside strings
// (URL userinfo, key=value pairs of secret-looking names, bearer tokens)
// masked, each value cut to valueMax, the whole to about argsMax.
// A hostile or careless host cannot make one audit line large.

const (
	valueMax    = 256     // one string or number, as the relay bounds its log values
	argsMax     = 4 << 10 // the arguments of one call
	depthMax    = 32      // nesting kept; deeper is cut
	maskedValue = "***"
)

// defaultMask are the globs (path.Match syntax, matched against the
// whole lowercased key) of keys whose values are never written. They err on
// masking too much: a hidden value costs a reader less than a leaked one.
var defaultMask = []string{
	"*token*", "*secret*", "*passw*", "*passphrase*", "*pwd*",
	"*key", "*apikey*", "*api_key*", "*api-key*", "*private*key*",
	"*auth", "auth[_-]*", "*[_-]auth[_-]*", "*authoriz*", "*authentic*",
	"*cookie*", "*credential*", "*session*", "*jwt*", "*bearer*",
}

// masker decides which keys are secret, and which strings hold a secret
// of a format the scanner knows (a key block, a token) whatever their key.
type masker struct {
	globs   []string
	secrets *secrets.Scanner
}

// newMasker is the default globs plus extra (validated by Policy.Validate),
// and sc's formats (nil: the default ones).
func newMasker(extra []string, sc *secrets.Scanner) *masker {
	if sc == nil {
		sc = secrets.New()
	}
	m := &masker{secrets: sc}
	for _, g := range append(append([]string(nil), defaultMask...), extra...) {
		m.globs = append(m.globs, strings.ToLower(g))
	}
	return m
}

// secretKey reports whether a member or parameter name is secret-looking.
// '/' is no separator here (path.Match's * stops at it).
func (m *masker) secretKey(k string) bool {
	k = strings.ReplaceAll(strings.ToLower(k), "/", "\x00")
	for _, g := range m.globs {
		if ok, _ := path.Match(g, k); ok {
			return true
		}
	}
	return false
}

var errCut = errors.New("audit: arguments cut")

// maskJSON returns raw (one JSON value) masked and bounded to about max
// bytes; cut says it was bounded, ok false that raw is not JSON.
func (m *masker) maskJSON(raw []byte, max int) (out []byte, cut, ok bool) {
	w := &maskWalk{m: m, dec: json.NewDecoder(bytes.NewReader(raw)), max: max}
	w.dec.UseNumber()
	switch err := w.value(0); err {
	case nil:
		return w.out, false, true
	case errCut:
		return w.out, true, true
	}
	return nil, false, false
}

// maskWalk re-encodes a value token by token, so that a cut leaves valid
// JSON: each open container closes itself on the way out.
type maskWalk struct {
	m   *masker
	dec *json.Decoder
	out []byte
	max int
}

func (w *maskWalk) value(depth int) error {
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth >= depthMax {
			w.out = appendString(w.out, "… (nested deeper than "+strconv.Itoa(depthMax)+")")
			return errCut
		}
		if t == '{' {
			return w.object(depth + 1)
		}
		return w.array(depth + 1)
	case string:
		w.out = appendString(w.out, cutText(w.m.maskText(t)))
	case json.Number:
		if len(t) > 64 {
			w.out = appendString(w.out, cutText(string(t)))
		} else {
			w.out = append(w.out, t...)
		}
	case bool:
		w.out = strconv.AppendBool(w.out, t)
	case nil:
		w.out = append(w.out, "null"...)
	}
	return nil
}

func (w *maskWalk) object(depth int) error {
	w.out = append(w.out, '{')
	for n := 0; w.dec.More(); n++ {
		if len(w.out) >= w.max {
			w.out = append(w.out, '}')
			return errCut
		}
		tok, err := w.dec.Token()
		if err != nil {
			return err
		}
		k, _ := tok.(string)
		if w.m.secrets.Holds(k) {
			k = maskedValue
		}
		if n > 0 {
			w.out = append(w.out, ',')
		}
		w.out = append(appendString(w.out, cutText(k)), ':')
		if w.m.secretKey(k) {
			w.out = appendString(w.out, maskedValue)
			if err := w.skip(); err != nil {
				return err
			}
			continue
		}
		if err := w.value(depth); err != nil {
			if err == errCut {
				w.out = append(w.out, '}')
			}
			return err
		}
	}
	if _, err := w.dec.Token(); err != nil {
		return err
	}
	w.out = append(w.out, '}')
	return nil
}

func (w *maskWalk) array(depth int) error {
	w.out = append(w.out, '[')
	for n := 0; w.dec.More(); n++ {
		if len(w.out) >= w.max {
			w.out = append(w.out, ']')
			return errCut
		}
		if n > 0 {
			w.out = append(w.out, ',')
		}
		if err := w.value(depth); err != nil {
			if err == errCut {
				w.out = append(w.out, ']')
			}
			return err
		}
	}
	if _, err := w.dec.Token(); err != nil {
		return err
	}
	w.out = append(w.out, ']')
	return nil
}

// skip consumes one value without keeping it.
func (w *maskWalk) skip() error {
	depth := 0
	for {
		tok, err := w.dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

// maskText masks the secrets a string may carry whatever its key: all of
// it when it holds a key block or a token, else the userinfo of URLs
// (https://user:***@host), values of secret-looking key=value pairs (a
// query, a fragment, a DSN) and bearer tokens.
func (m *masker) maskText(s string) string {
	if m.secrets.Holds(s) {
		return maskedValue
	}
	if strings.Contains(s, "://") {
		s = maskUserinfo(s)
	}
	if strings.IndexByte(s, '=') >= 0 {
		s = m.maskPairs(s)
	}
	return maskBearer(s)
}

// maskUserinfo masks what precedes '@' in the authority of each URL in s:
// the password after "user:", or all of it (a token alone, as in
// https://TOKEN@github.com).
func maskUserinfo(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i+3])
		s = s[i+3:]
		end := strings.IndexAny(s, "/?# \t\r\n\"'<>")
		if end < 0 {
			end = len(s)
		}
		if at := strings.LastIndexByte(s[:end], '@'); at >= 0 {
			if c := strings.IndexByte(s[:at], ':'); c >= 0 {
				b.WriteString(s[:c+1])
			}
			b.WriteString(maskedValue)
			s = s[at:]
		}
	}
}

// maskPairs masks the value of every NAME=VALUE in s whose NAME is
// secret-looking; a value ends at & ; # or white space.
func (m *masker) maskPairs(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			continue
		}
		start := i
		for start > 0 && !isPairBoundary(s[start-1]) {
			start--
		}
		if start == i || !m.secretKey(s[start:i]) {
			continue
		}
		end := i + 1
		for end < len(s) && !isPairBoundary(s[end]) {
			end++
		}
		if end == i+1 {
			continue
		}
		b.WriteString(s[last : i+1])
		b.WriteString(maskedValue)
		last, i = end, end-1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isPairBoundary(c byte) bool {
	switch c {
	case '?', '&', ';', '#', ' ', '\t', '\r', '\n', '"', '\'', ',':
		return true
	}
	return false
}

// maskBearer masks the token after each "Bearer " (any case).
func maskBearer(s string) string {
	const word = "bearer "
	low := strings.ToLower(s)
	if !strings.Contains(low, word) {
		return s
	}
	var b strings.Builder
	last := 0
	for off := 0; ; {
		i := strings.Index(low[off:], word)
		if i < 0 {
			break
		}
		tok := off + i + len(word)
		end := tok
		for end < len(s) && s[end] != ' ' && s[end] != '\t' && s[end] != '\n' && s[end] != '"' {
			end++
		}
		if end > tok {
			b.WriteString(s[last:tok])
			b.WriteString(maskedValue)
			last = end
		}
		off = max(end, tok)
	}
	b.WriteString(s[last:])
	return b.String()
}

// cutText bounds a value as logValue does: valid UTF-8, at most
// valueMax bytes, the original length noted when cut.
func cutText(s string) string {
	if len(s) <= valueMax {
		return s
	}
	return strings.ToValidUTF8(s[:valueMax], "\uFFFD") + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

// appendString appends s as a JSON string, without HTML escaping.
func appendString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
