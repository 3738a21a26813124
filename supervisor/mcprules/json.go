package mcprules

import (
	"bytes"
	"encoding/json"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
)

// members decodes a JSON object keeping keys exact. Duplicates: the last
// wins, as in JSON.parse and Go's encoding/json.
func members(obj []byte) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil || m == nil {
		return nil, false
	}
	return m, true
}

// nameOf is the name member of a tool or a tools/call's params. A Go
// program decodes members case-insensitively, a JavaScript one exactly, so
// {"name":"echo","NAME":"crash"} reads as crash to a Go SDK server: a name
// spelt more than one way is unreadable, never checked one way and used
// another.
func nameOf(m map[string]json.RawMessage) (string, bool) { return jsonrpc.ExactMember(m, "name") }

// EncodeObject encodes members compactly, keeping the server's strings as
// written (no HTML escaping): how a rule rewrites an object it decoded.
func EncodeObject(m map[string]json.RawMessage) ([]byte, error) {
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}
