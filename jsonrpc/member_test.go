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

// ExactMemberValue reads a member as ExactMember does, from the raw
// object: spelt two ways, or twice, it is unreadable; absent is nil.
func TestExactMemberValue(t *testing.T) {
	for _, c := range []struct {
		obj, key, want string
		ok             bool
	}{
		{`{"name":"echo","arguments":{"name":"x","NAME":"y"}}`, "name", `"echo"`, true},
		{`{"arguments":{}, "name" : "echo" }`, "name", `"echo"`, true},
		{`{"name":"echo","NAME":"crash"}`, "name", "", false},
		{`{"name":"echo","name":"crash"}`, "name", "", false},
		{`{"n\u0061me":"crash"}`, "name", "", false},
		{`{"Name":"crash"}`, "name", "", false},
		{`{"other":1}`, "name", "", true},
		{`{}`, "name", "", true},
		{`[]`, "name", "", false},
		{`{"name":"echo"`, "name", "", false},
	} {
		got, ok := ExactMemberValue([]byte(c.obj), c.key)
		if string(got) != c.want || ok != c.ok {
			t.Errorf("ExactMemberValue(%s, %q) = %s, %v; want %s, %v", c.obj, c.key, got, ok, c.want, c.ok)
		}
	}
}
