package jsonrpc

import (
	"encoding/json"
	"strconv"
)

// Builders for the few messages a relay writes itself. They run on rare
// paths (errors, replay, heartbeats), so plain encoding/json is fine here.

// NewError builds a newline-terminated error response for a raw id; data
// is left out when nil.
func NewError(id []byte, code int, message string, data any) []byte {
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
	if data != nil {
		b = append(b, `,"data":`...)
		b = appendJSON(b, data)
	}
	return append(b, "}}\n"...)
}

// NewResult builds a newline-terminated success response.
func NewResult(id, result []byte) []byte {
	b := make([]byte, 0, 40+len(id)+len(result))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, "}\n"...)
}

// NewRequest builds a newline-terminated request; params may be nil.
func NewRequest(id []byte, method string, params []byte) []byte {
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

// NewNotification builds a newline-terminated notification; params may be
// nil.
func NewNotification(method string, params any) []byte {
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
