package supervisor

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// Builders for the few messages mcpsandbox writes itself. They run on rare
// paths (errors, replay, heartbeats), so plain encoding/json is fine here.

// relayPrefix marks ids that mcpsandbox made up: its own requests to the
// server (pings, replayed initialize) and the ids it gives server→host
// requests. Host ids that happen to use it are remapped.
const relayPrefix = "mcpsandbox:"

var quotedRelayPrefix = []byte(`"` + relayPrefix)

// isRelayID reports whether a raw id token is in the reserved namespace.
func isRelayID(raw []byte) bool { return bytes.HasPrefix(raw, quotedRelayPrefix) }

// quoteID makes a raw JSON string id token from its contents (which never
// need escaping: relay ids are ASCII without quotes or backslashes).
func quoteID(s string) []byte { return []byte(`"` + s + `"`) }

// errorData is the data member of mcpsandbox's own errors.
type errorData struct {
	Source     string `json:"source,omitempty"` // "mcpsandbox" (withKind)
	Kind       string `json:"kind,omitempty"`   // codeKinds
	Reason     string `json:"reason"`
	Generation int    `json:"generation,omitempty"`
	Limit      string `json:"limit,omitempty"`
	// RetryAfterMs is when a rate-limited call would be let through.
	RetryAfterMs int64 `json:"retryAfterMs,omitempty"`
}

// errorResponse builds a newline-terminated error response for a raw id.
func errorResponse(id []byte, code int, message string, data any) []byte {
	if id == nil {
		id = []byte("null")
	}
	b := make([]byte, 0, 160+len(message))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"message":`...)
	b = appendJSON(b, message)
	if data = withKind(code, data); data != nil {
		b = append(b, `,"data":`...)
		b = appendJSON(b, data)
	}
	return append(b, "}}\n"...)
}

// resultResponse builds a newline-terminated success response.
func resultResponse(id, result []byte) []byte {
	b := make([]byte, 0, 40+len(id)+len(result))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, "}\n"...)
}

// request builds a newline-terminated request; params may be nil.
func request(id []byte, method string, params []byte) []byte {
	b := make([]byte, 0, 64+len(id)+len(method)+len(params))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"method":`...)
	b = appendJSON(b, method)
	if params != nil {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, "}\n"...)
}

// notification builds a newline-terminated notification; params may be nil.
func notification(method string, params any) []byte {
	b := append([]byte(nil), `{"jsonrpc":"2.0","method":`...)
	b = appendJSON(b, method)
	if params != nil {
		b = append(b, `,"params":`...)
		b = appendJSON(b, params)
	}
	return append(b, "}\n"...)
}

func appendJSON(b []byte, v any) []byte {
	if raw, ok := v.(json.RawMessage); ok {
		return append(b, raw...)
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, enc...)
}

// splice returns a copy of msg with msg[start:end] replaced by repl. The
// trailing newline, if any, is kept.
func splice(msg []byte, start, end int, repl []byte) []byte {
	out := make([]byte, 0, len(msg)-(end-start)+len(repl)+1)
	out = append(out, msg[:start]...)
	out = append(out, repl...)
	return append(out, msg[end:]...)
}

// offsetIn returns where sub starts within msg; sub must be a subslice of it.
func offsetIn(msg, sub []byte) int {
	return cap(msg) - cap(sub)
}

// idKey is the map key of a raw id token: the token itself, except that an
// escaped string is decoded first so "a\u0062" and "ab" match.
func idKey(raw []byte, escaped bool) string {
	if escaped && len(raw) >= 2 {
		if s, ok := unquoteContents(raw[1 : len(raw)-1]); ok {
			q, _ := json.Marshal(s)
			return string(q)
		}
	}
	return string(raw)
}

// withNewline returns line newline-terminated, copying only when needed (a
// last line that ended at EOF).
func withNewline(line []byte) []byte {
	if len(line) > 0 && line[len(line)-1] == '\n' {
		return line
	}
	return append(append(make([]byte, 0, len(line)+1), line...), '\n')
}

// isBlank reports whether a line holds only whitespace.
func isBlank(line []byte) bool {
	return len(bytes.TrimSpace(line)) == 0
}

// tailID recovers the id of an oversized message from its last bytes, for
// servers that put the id last (the TypeScript SDK writes
// {"result":…,"jsonrpc":"2.0","id":N}). It accepts only `"id":VALUE}` at
// the very end, which a nested id cannot produce (it would close more than
// one object).
func tailID(tail []byte) []byte {
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
	var sc scanner
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
