package jsonrpc

import (
	"strings"
	"testing"
)

// ResultMember finds a top-level member of an object result wherever it
// sits, however it is spaced or escaped, and nothing nested or in a string.
func TestResultMember(t *testing.T) {
	many := `"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,`
	for _, c := range []struct{ line, want string }{
		{`{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}`, `true`},
		{`{"jsonrpc":"2.0","id":1,"result":{"isError":false,"content":[{"type":"text","text":"x"}]}}`, `false`},
		{`{"jsonrpc": "2.0", "id": 1, "result": { "content" : [ ] , "isError" : true } }`, `true`},
		{`{"jsonrpc":"2.0","id":1,"result":{"is\u0045rror":true}}`, `true`},
		{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"isError":true}],"text":"\"isError\":true"}}`, ``},
		{`{"jsonrpc":"2.0","id":1,"result":{` + many + `"isError":{"deep":[1]}}}`, `{"deep":[1]}`}, // more than noted
		{`{"jsonrpc":"2.0","id":1,"result":{"isError":1,"isError":2}}`, `1`},
		{`{"jsonrpc":"2.0","id":1,"result":[{"isError":true}]}`, ``},
		{`{"jsonrpc":"2.0","id":1,"result":{"isError":true},"result":"replaced"}`, ``},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, ``},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","isError":true}}`, ``},
	} {
		e, err := scanOne(t, c.line)
		if err != nil {
			t.Fatalf("%s: %v", c.line, err)
		}
		if got := string(e.ResultMember("isError")); got != c.want {
			t.Errorf("%s: isError %q, want %q", c.line, got, c.want)
		}
	}
	line := `[{"jsonrpc":"2.0","id":1,"result":{"isError":true}},{"jsonrpc":"2.0","id":2,"result":{"x":1,"isError":false}}]`
	var sc Scanner
	var b Batch
	if err := sc.Scan([]byte(line), &b); err != nil || len(b.Msgs) != 2 {
		t.Fatal(err)
	}
	for i, want := range []string{"true", "false"} {
		if got := string(b.Msgs[i].ResultMember("isError")); got != want {
			t.Errorf("batch element %d: isError %q, want %q", i, got, want)
		}
	}
}

// An object result counts toward the nesting bound as any other value.
func TestStrictScanNestingInAnObjectResult(t *testing.T) {
	deep := func(d int) string { // total nesting d: top level, result, d-2 arrays
		return `{"jsonrpc":"2.0","id":1,"result":{"a":` + strings.Repeat("[", d-2) + strings.Repeat("]", d-2) + `}}`
	}
	sc := Scanner{Strict: true}
	var b Batch
	if err := sc.Scan([]byte(deep(strictDepth)), &b); err != nil {
		t.Errorf("nesting at the bound: %v", err)
	}
	if err := sc.Scan([]byte(deep(strictDepth+1)), &b); err == nil {
		t.Error("nesting over the bound accepted")
	}
	if err := sc.Scan([]byte(`[`+deep(strictDepth-1)+`]`), &b); err != nil {
		t.Errorf("batch nesting at the bound: %v", err)
	}
	if err := sc.Scan([]byte(`[`+deep(strictDepth)+`]`), &b); err == nil {
		t.Error("batch nesting over the bound accepted")
	}
	var loose Scanner
	if err := loose.Scan([]byte(deep(maxDepth)), &b); err != nil {
		t.Errorf("loose nesting at encoding/json's bound: %v", err)
	}
	if err := loose.Scan([]byte(deep(maxDepth+2)), &b); err == nil {
		t.Error("loose nesting past encoding/json's bound accepted")
	}
}
