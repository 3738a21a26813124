package jsonrpc

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"
)

// The envelope scanner reads just enough of a JSON-RPC message to route it:
// the top-level id (as raw bytes and their span), method, and whether there
// is a result or an error. It also validates the whole message as JSON in
// the same single pass, because one malformed line reaching a host ends its
// session. Nothing is decoded: ids stay bytes (never float64) and rewriting
// one is splicing bytes at the recorded span.

// Kind classifies a JSON-RPC message.
type Kind uint8

const (
	Invalid      Kind = iota // valid JSON, not JSON-RPC (Envelope.Problem says why)
	Request                  // method and id
	Notification             // method, no id
	Response                 // result or error, and id
)

// IDKind says what JSON type an id has.
type IDKind uint8

const (
	IDNone IDKind = iota
	IDNull
	IDString
	IDNumber
)

// Envelope is what routing needs from one message. Slices alias the scanned
// message; spans are offsets into it.
type Envelope struct {
	Kind          Kind
	IDKind        IDKind
	IDStart       int // span of the raw id token, quotes included
	IDEnd         int
	IDEscaped     bool   // the id string has backslash escapes
	Method        []byte // method string contents, without quotes
	MethodEscaped bool
	Params        []byte // raw params value, nil when absent
	Result        []byte // raw result value
	HasResult     bool
	HasError      bool
	ErrorValue    []byte // raw error value
	jsonrpcOK     bool   // "jsonrpc":"2.0" is present
	Problem       string // why kind is invalid
	result        resultMembers
}

// ID returns the raw id token of e within msg.
func (e *Envelope) ID(msg []byte) []byte {
	if e.IDKind == IDNone {
		return nil
	}
	return msg[e.IDStart:e.IDEnd]
}

// MethodIs reports whether the method equals m (handling escaped methods).
func (e *Envelope) MethodIs(m string) bool {
	if !e.MethodEscaped {
		return string(e.Method) == m
	}
	s, ok := unquoteContents(e.Method)
	return ok && s == m
}

// MethodString returns the method as a Go string.
func (e *Envelope) MethodString() string {
	if !e.MethodEscaped {
		return string(e.Method)
	}
	s, _ := unquoteContents(e.Method)
	return s
}

// Batch is a scanned top-level value: one message or a JSON-RPC batch.
type Batch struct {
	IsArray bool
	Msgs    []Envelope
	Spans   [][2]int // each element's span in the line (batches only)
}

var errTruncated = errors.New("unexpected end of message")

// Scanner walks one JSON text; its zero value is ready. Its stack is reused
// between messages, so keep one per reader.
type Scanner struct {
	b     []byte
	i     int
	stack []byte
	// Strict holds a message to what every JSON parser a peer may use
	// accepts: nesting at most strictDepth, strings valid UTF-8 (RFC 8259
	// §8.1) without unpaired surrogate escapes. Without it, messages are
	// checked as encoding/json does.
	Strict bool
	outer  int // containers open around the value being scanned (strict)
	inner  int // of those, the ones below the top level (resultObject's)
}

// maxDepth bounds nesting, as encoding/json does, so the scanner cannot be
// made to grow its stack without limit.
const maxDepth = 10000

// strictDepth bounds the nesting of a server message, counting its
// top-level object: well under what hosts' parsers accept (Rust's
// serde_json stops at 128, Python's json near 1000 by recursion, Go's
// encoding/json at 10000), and far above real MCP messages, whose deepest
// parts are JSON Schemas a few dozen levels deep.
const strictDepth = 100

// Scan scans one line into out (whose slices are reused). It returns an
// error when the line is not a JSON value; a valid JSON value that is not
// JSON-RPC comes back with Kind Invalid and a Problem instead. The envelope of
// an invalid line still holds an id when one was read before the error, so
// that the request it answers can be found.
func (s *Scanner) Scan(line []byte, out *Batch) error {
	s.b, s.i = line, 0
	out.IsArray = false
	out.Msgs = out.Msgs[:0]
	out.Spans = out.Spans[:0]
	s.ws()
	if s.i >= len(s.b) {
		return errTruncated
	}
	switch s.b[s.i] {
	case '{':
		out.Msgs = append(out.Msgs, Envelope{})
		s.outer = 1
		if err := s.object(&out.Msgs[0]); err != nil {
			return err
		}
	case '[':
		out.IsArray = true
		s.i++
		s.ws()
		if s.peek() == ']' {
			s.i++
			break
		}
		for {
			s.ws()
			start := s.i
			out.Msgs = append(out.Msgs, Envelope{})
			e := &out.Msgs[len(out.Msgs)-1]
			s.outer = 2
			if s.peek() == '{' {
				if err := s.object(e); err != nil {
					return err
				}
			} else {
				if err := s.value(); err != nil {
					return err
				}
				e.Kind, e.Problem = Invalid, "batch element is not an object"
			}
			out.Spans = append(out.Spans, [2]int{start, s.i})
			s.ws()
			c := s.peek()
			s.i++
			if c == ']' {
				break
			}
			if c != ',' {
				return s.errAt("expected , or ] in batch")
			}
		}
	default:
		s.outer = 0
		if err := s.value(); err != nil {
			return err
		}
		out.Msgs = append(out.Msgs, Envelope{Problem: "not a JSON object"})
	}
	s.ws()
	if s.i != len(s.b) {
		return s.errAt("trailing data after the JSON value")
	}
	return nil
}

func (s *Scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *Scanner) errAt(what string) error {
	if s.i >= len(s.b) {
		return errTruncated
	}
	return errors.New(what + " at byte " + strconv.Itoa(s.i))
}

func (s *Scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// object scans a top-level JSON-RPC object, filling e.
func (s *Scanner) object(e *Envelope) error {
	*e = Envelope{}
	s.i++ // '{'
	s.ws()
	if s.peek() == '}' {
		s.i++
		return s.classify(e)
	}
	for {
		s.ws()
		if s.peek() != '"' {
			return s.errAt("expected a member name")
		}
		kStart := s.i
		escaped, err := s.str()
		if err != nil {
			return err
		}
		key := s.b[kStart+1 : s.i-1]
		if escaped {
			if k, ok := unquoteContents(key); ok {
				key = []byte(k)
			}
		}
		s.ws()
		if s.peek() != ':' {
			return s.errAt("expected :")
		}
		s.i++
		s.ws()
		vStart := s.i
		switch string(key) {
		case "id":
			switch c := s.peek(); {
			case c == '"':
				e.IDKind = IDString
				e.IDEscaped, err = s.str()
			case c == '-' || isDigit(c):
				e.IDKind = IDNumber
				err = s.number()
			case c == 'n':
				e.IDKind = IDNull
				err = s.value()
			default:
				err = s.value()
				e.Problem = "id is neither a string nor a number"
			}
			if err == nil {
				e.IDStart, e.IDEnd = vStart, s.i
			} else {
				e.IDKind = IDNone
			}
		case "method":
			if s.peek() != '"' {
				err = s.value()
				e.Problem = "method is not a string"
				break
			}
			if e.MethodEscaped, err = s.str(); err == nil {
				e.Method = s.b[vStart+1 : s.i-1]
			}
		case "jsonrpc":
			err = s.value()
			e.jsonrpcOK = string(s.b[vStart:s.i]) == `"2.0"`
		case "result":
			e.HasResult = true
			if s.peek() == '{' {
				err = s.resultObject(&e.result)
			} else {
				e.result = resultMembers{}
				err = s.value()
			}
			e.Result = s.b[vStart:s.i]
		case "error":
			e.HasError = true
			err = s.value()
			e.ErrorValue = s.b[vStart:s.i]
		case "params":
			err = s.value()
			e.Params = s.b[vStart:s.i]
		default:
			err = s.value()
		}
		if err != nil {
			return err
		}
		s.ws()
		c := s.peek()
		s.i++
		if c == '}' {
			return s.classify(e)
		}
		if c != ',' {
			s.i--
			return s.errAt("expected , or }")
		}
	}
}

// classify decides the kind of a syntactically valid object.
func (s *Scanner) classify(e *Envelope) error {
	switch {
	case e.Problem != "":
	case !e.jsonrpcOK:
		e.Problem = `"jsonrpc":"2.0" is missing`
	case e.Method != nil && (e.HasResult || e.HasError):
		e.Problem = "both method and result/error"
	case e.Method != nil && e.IDKind == IDNone:
		e.Kind = Notification
	case e.Method != nil && e.IDKind == IDNull:
		e.Problem = "request with a null id"
	case e.Method != nil:
		e.Kind = Request
	case e.HasResult == e.HasError:
		e.Problem = "neither method nor exactly one of result and error"
	case e.IDKind == IDNone:
		e.Problem = "response without an id"
	default:
		e.Kind = Response
	}
	return nil
}

// MemberValue returns the raw value of the named member of a JSON object
// (which must be valid JSON), or nil.
func MemberValue(obj []byte, name string) []byte {
	var found []byte
	eachMember(obj, func(key []byte, escaped bool, value []byte) bool {
		if keyIs(key, escaped, name) {
			found = value
			return false
		}
		return true
	})
	return found
}

// eachMember calls fn with each member of the JSON object obj in order
// (its key's contents as written, whether they hold an escape, and its
// raw value) until fn returns false. It reports whether obj was read to
// its end as an object, or to where fn stopped.
func eachMember(obj []byte, fn func(key []byte, escaped bool, value []byte) bool) bool {
	var s Scanner
	s.b = obj
	s.ws()
	if s.peek() != '{' {
		return false
	}
	s.i++
	s.ws()
	if s.peek() == '}' {
		return true
	}
	for {
		s.ws()
		if s.peek() != '"' {
			return false
		}
		kStart := s.i
		escaped, err := s.str()
		if err != nil {
			return false
		}
		key := obj[kStart+1 : s.i-1]
		s.ws()
		if s.peek() != ':' {
			return false
		}
		s.i++
		s.ws()
		vStart := s.i
		if s.value() != nil {
			return false
		}
		if !fn(key, escaped, obj[vStart:s.i]) {
			return true
		}
		s.ws()
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			return true
		default:
			return false
		}
	}
}

// keyIs reports whether a key's contents (as eachMember gives them) are name.
func keyIs(key []byte, escaped bool, name string) bool {
	if !escaped {
		return string(key) == name
	}
	k, _ := unquoteContents(key)
	return k == name
}

// value skips one JSON value, validating it. Containers are walked with an
// explicit stack, so nesting depth costs no Go stack.
func (s *Scanner) value() error {
	base := len(s.stack)
	defer func() { s.stack = s.stack[:base] }()
	limit := s.depthLimit()
	for {
		// Expect a value.
		s.ws()
		if s.i >= len(s.b) {
			return errTruncated
		}
		switch c := s.b[s.i]; {
		case c == '{' || c == '[':
			if len(s.stack)-base >= limit {
				return s.errAt("nesting too deep")
			}
			s.i++
			s.ws()
			if (c == '{' && s.peek() == '}') || (c == '[' && s.peek() == ']') {
				s.i++
				break
			}
			s.stack = append(s.stack, c)
			if c == '{' {
				if err := s.memberName(); err != nil {
					return err
				}
			}
			continue
		case c == '"':
			if _, err := s.str(); err != nil {
				return err
			}
		case c == 't':
			if err := s.literal("true"); err != nil {
				return err
			}
		case c == 'f':
			if err := s.literal("false"); err != nil {
				return err
			}
		case c == 'n':
			if err := s.literal("null"); err != nil {
				return err
			}
		default:
			if err := s.number(); err != nil {
				return err
			}
		}
		// After a value: close containers or move to the next element.
		for {
			if len(s.stack) == base {
				return nil
			}
			s.ws()
			top := s.stack[len(s.stack)-1]
			c := s.peek()
			if c == ',' {
				s.i++
				if top == '{' {
					if err := s.memberName(); err != nil {
						return err
					}
				}
				break
			}
			if (top == '{' && c == '}') || (top == '[' && c == ']') {
				s.i++
				s.stack = s.stack[:len(s.stack)-1]
				continue
			}
			return s.errAt("expected , or closing bracket")
		}
	}
}

// depthLimit is how many containers value may open.
func (s *Scanner) depthLimit() int {
	if s.Strict {
		return strictDepth - s.outer
	}
	return maxDepth - s.inner
}

// memberName scans `"name" :` inside an object.
func (s *Scanner) memberName() error {
	s.ws()
	if s.peek() != '"' {
		return s.errAt("expected a member name")
	}
	if _, err := s.str(); err != nil {
		return err
	}
	s.ws()
	if s.peek() != ':' {
		return s.errAt("expected :")
	}
	s.i++
	return nil
}

func (s *Scanner) literal(lit string) error {
	if len(s.b)-s.i < len(lit) {
		return errTruncated
	}
	if string(s.b[s.i:s.i+len(lit)]) != lit {
		return s.errAt("invalid literal")
	}
	s.i += len(lit)
	return nil
}

// number validates the JSON number grammar.
func (s *Scanner) number() error {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		s.i = i
		return errTruncated
	case b[i] == '0':
		i++
	case isDigit(b[i]):
		i = skipDigits(b, i)
	default:
		s.i = i
		return s.errAt("invalid character in number")
	}
	if i < len(b) && b[i] == '.' {
		d := i + 1
		if i = skipDigits(b, d); i == d {
			s.i = i
			return s.errAt("digit expected after decimal point")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		if i = skipDigits(b, d); i == d {
			s.i = i
			return s.errAt("digit expected in exponent")
		}
	}
	s.i = i
	return nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// skipDigits returns the index of the first non-digit at or after i.
func skipDigits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

// str scans a string starting at its opening quote and leaves s.i after the
// closing one. Control characters are rejected as encoding/json does;
// invalid UTF-8 and unpaired surrogate escapes are rejected when strict
// (some decoders replace them, others fail the whole message), and left
// alone otherwise.
func (s *Scanner) str() (escaped bool, err error) {
	b := s.b
	i := s.i + 1
	for {
		if s.Strict {
			i = skipPlainASCII(b, i)
		} else {
			i = skipPlain(b, i)
		}
		if i >= len(b) {
			s.i = i
			return escaped, errTruncated
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return escaped, nil
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				s.i = len(b)
				return escaped, errTruncated
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(b)-i < 6 {
					s.i = len(b)
					return escaped, errTruncated
				}
				for _, h := range b[i+2 : i+6] {
					if !isHex(h) {
						s.i = i
						return escaped, s.errAt("invalid \\u escape")
					}
				}
				if s.Strict && isSurrogate(b[i+2:i+6]) {
					if !pairedSurrogate(b[i:]) {
						s.i = i
						return escaped, s.errAt("unpaired surrogate escape")
					}
					i += 6 // the low half, checked already
				}
				i += 6
			default:
				s.i = i
				return escaped, s.errAt("invalid escape")
			}
		case c >= 0x80:
			// A run of non-ASCII bytes holds whole runes: validate it at once.
			j := i + 1
			for j < len(b) && b[j] >= 0x80 {
				j++
			}
			if !utf8.Valid(b[i:j]) {
				s.i = i
				return escaped, s.errAt("invalid UTF-8 in string")
			}
			i = j
		default:
			s.i = i
			return escaped, s.errAt("control character in string")
		}
	}
}

func isHex(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// isSurrogate reports whether four hex digits name a UTF-16 surrogate.
func isSurrogate(h []byte) bool {
	v := hex4(h)
	return v >= 0xd800 && v < 0xe000
}

// pairedSurrogate reports whether esc starts with a high surrogate escape
// followed by a low one.
func pairedSurrogate(esc []byte) bool {
	if len(esc) < 12 || esc[6] != '\\' || esc[7] != 'u' {
		return false
	}
	for _, h := range esc[8:12] {
		if !isHex(h) {
			return false
		}
	}
	hi, lo := hex4(esc[2:6]), hex4(esc[8:12])
	return hi < 0xdc00 && lo >= 0xdc00 && lo < 0xe000
}

// hex4 decodes four hex digits (already checked).
func hex4(h []byte) int {
	v := 0
	for _, c := range h {
		switch {
		case c <= '9':
			v = v<<4 | int(c-'0')
		case c >= 'a':
			v = v<<4 | int(c-'a'+10)
		default:
			v = v<<4 | int(c-'A'+10)
		}
	}
	return v
}

// unquoteContents decodes the contents of a JSON string (without quotes).
// Only escaped strings get here, which is rare: encoding/json is fine.
func unquoteContents(b []byte) (string, bool) {
	quoted := make([]byte, 0, len(b)+2)
	quoted = append(append(append(quoted, '"'), b...), '"')
	var s string
	err := json.Unmarshal(quoted, &s)
	return s, err == nil
}
