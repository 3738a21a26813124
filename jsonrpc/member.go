package jsonrpc

import (
	"encoding/json"
	"strings"
)

// ExactMember is the string member key of m, read as every receiver would
// read it, or unreadable (false): a Go program decodes members
// case-insensitively, a JavaScript one exactly, so
// {"name":"echo","NAME":"crash"} reads as crash to a Go SDK server. A
// member spelt more than one way is never checked one way and used
// another; the MCP rules and the audit log both read names through it.
func ExactMember(m map[string]json.RawMessage, key string) (string, bool) {
	for k := range m {
		if k != key && strings.EqualFold(k, key) {
			return "", false
		}
	}
	return StringValue(m[key])
}

// StringValue decodes a JSON string value (nil: missing).
func StringValue(v json.RawMessage) (s string, ok bool) {
	if v == nil || json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// ExactMemberValue is the raw value of obj's member name, read as every
// receiver would read it (ExactMember) without decoding the rest: nil and
// true when it is absent, false when obj is no object or a member is
// spelt more than one way (another case, an escape, twice).
func ExactMemberValue(obj []byte, name string) ([]byte, bool) {
	var found []byte
	exact := true
	ok := eachMember(obj, func(key []byte, escaped bool, value []byte) bool {
		k := string(key)
		if escaped {
			k, _ = unquoteContents(key)
		}
		if strings.EqualFold(k, name) {
			if found != nil || escaped || k != name {
				exact = false
				return false
			}
			found = value
		}
		return true
	})
	if !ok || !exact {
		return nil, false
	}
	return found, true
}
