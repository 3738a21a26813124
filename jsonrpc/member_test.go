package jsonrpc

import (
	"encoding/json"
	"testing"
)

// A member spelt two ways is unreadable, whichever spelling is asked for.
func TestExactMember(t *testing.T) {
	for _, c := range []struct {
		obj, key, want string
		ok             bool
	}{
		{`{"name":"echo"}`, "name", "echo", true},
		{`{"name":"echo","NAME":"crash"}`, "name", "", false},
		{`{"Name":"crash"}`, "name", "", false},
		{`{"name":7}`, "name", "", false},
		{`{}`, "name", "", false},
		{`{"name":"a\u0062"}`, "name", "ab", true},
	} {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(c.obj), &m); err != nil {
			t.Fatal(err)
		}
		if got, ok := ExactMember(m, c.key); got != c.want || ok != c.ok {
			t.Errorf("ExactMember(%s, %q) = %q, %v; want %q, %v", c.obj, c.key, got, ok, c.want, c.ok)
		}
	}
}
