package jsonrpc

import (
	"bytes"
	"encoding/json"
)

// Splice returns a copy of msg with msg[start:end] replaced by repl. The
// trailing newline, if any, is kept.
func Splice(msg []byte, start, end int, repl []byte) []byte {
	out := make([]byte, 0, len(msg)-(end-start)+len(repl)+1)
	out = append(out, msg[:start]...)
	out = append(out, repl...)
	return append(out, msg[end:]...)
}

// OffsetIn returns where sub starts within msg; sub must be a subslice of it.
func OffsetIn(msg, sub []byte) int {
	return cap(msg) - cap(sub)
}

// IDKey is the map key of a raw id token: the token itself, except that an
// escaped string is decoded first so "a\u0062" and "ab" match.
func IDKey(raw []byte, escaped bool) string {
	if escaped && len(raw) >= 2 {
		if s, ok := unquoteContents(raw[1 : len(raw)-1]); ok {
			q, _ := json.Marshal(s)
			return string(q)
		}
	}
	return string(raw)
}

// WithNewline returns line newline-terminated, copying only when needed (a
// last line that ended at EOF).
func WithNewline(line []byte) []byte {
	if len(line) > 0 && line[len(line)-1] == '\n' {
		return line
	}
	return append(append(make([]byte, 0, len(line)+1), line...), '\n')
}

// IsBlank reports whether a line holds only whitespace.
func IsBlank(line []byte) bool {
	return len(bytes.TrimSpace(line)) == 0
}

// TailID recovers the id of an oversized message from its last bytes, for
// servers that put the id last (the TypeScript SDK writes
// {"result":…,"jsonrpc":"2.0","id":N}). It accepts only `"id":VALUE}` at
// the very end, which a nested id cannot produce (it would close more than
// one object).
func TailID(tail []byte) []byte {
	t := bytes.TrimRight(tail, " \t\r\n")
	if len(t) == 0 || t[len(t)-1] != '}' {
		return nil
	}
	t = bytes.TrimRight(t[:len(t)-1], " \t\r\n")
	k := bytes.LastIndex(t, []byte(`"id"`))
	if k < 0 {
		return nil
	}
	rest := bytes.TrimLeft(t[k+4:], " \t\r\n")
	if len(rest) == 0 || rest[0] != ':' {
		return nil
	}
	val := bytes.TrimLeft(rest[1:], " \t\r\n")
	var sc Scanner
	sc.b = val
	var err error
	switch {
	case len(val) > 0 && val[0] == '"':
		_, err = sc.str()
	default:
		err = sc.number()
	}
	if err != nil || sc.i != len(val) {
		return nil
	}
	return val
}
