package jsonrpc

import (
	"bytes"
	"strings"
	"testing"
)

// What the server sends must parse in every host: the strict scan rejects
// deep nesting, invalid UTF-8 and unpaired surrogates, which encoding/json
// accepts or replaces, and still finds the id when it came first.
func TestStrictScan(t *testing.T) {
	deep := func(d int) string { // total nesting d, top-level object included
		return `{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", d-1) + strings.Repeat("]", d-1) + `}`
	}
	for _, c := range []struct {
		name, line string
		ok         bool
	}{
		{"nesting at the bound", deep(strictDepth), true},
		{"nesting over the bound", deep(strictDepth + 1), false},
		{"batch nesting over the bound", `[` + deep(strictDepth) + `]`, false},
		{"valid UTF-8", `{"jsonrpc":"2.0","id":1,"result":{"t":"héllo 世界 😀"}}`, true},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"bad \xff\"}}", false},
		{"overlong encoding", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"\xc0\xaf\"}}", false},
		{"truncated rune", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"\xe4\xb8\"}}", false},
		{"paired surrogates", `{"jsonrpc":"2.0","id":1,"result":{"t":"\ud83d\ude00"}}`, true},
		{"lone high surrogate", `{"jsonrpc":"2.0","id":1,"result":{"t":"\ud83d x"}}`, false},
		{"lone low surrogate", `{"jsonrpc":"2.0","id":1,"result":{"t":"\ude00"}}`, false},
	} {
		strict, loose := Scanner{Strict: true}, Scanner{}
		var b Batch
		err := strict.Scan([]byte(c.line), &b)
		if (err == nil) != c.ok {
			t.Errorf("%s: strict scan says %v, want ok=%v", c.name, err, c.ok)
		}
		if !c.ok && !b.IsArray && (b.Msgs[0].IDKind != IDNumber || string(b.Msgs[0].ID([]byte(c.line))) != "1") {
			t.Errorf("%s: the id read before the error is lost", c.name)
		}
		if c.name != "nesting over the bound" && c.name != "batch nesting over the bound" {
			continue
		}
		if err := loose.Scan([]byte(c.line), &b); err != nil {
			t.Errorf("%s: host messages keep encoding/json's bound, got %v", c.name, err)
		}
	}
}

// The id of an oversized message is found while it streams past, wherever
// it sits; nested ids, ids inside strings and escaped names do not count.
func TestFinderFindsIDInTheMiddle(t *testing.T) {
	pad := strings.Repeat("x", 64<<10)
	for _, c := range []struct {
		line, want string
		request    bool
	}{
		{`{"jsonrpc":"2.0","result":{"text":"` + pad + `","id":9},"id":42,"more":"` + pad + `"}`, `42`, false},
		{`{"result":{"a":["` + pad + `\"id\":7"]},"id":"a\"b","z":"` + pad + `"}`, `"a\"b"`, false},
		{`{"method":"sampling/createMessage","params":{"t":"` + pad + `"},"id":-3.5e2 ,"x":1}`, `-3.5e2`, true},
		{`{"result":{"id":5,"t":"` + pad + `"}}`, ``, false},
		{`{"result":"` + pad + `","\u0069d":5}`, ``, false},
		{`{"result":"` + strings.Repeat("y", 2000) + `","id":3}`, `3`, false}, // newline in the first read
		{`[{"id":1,"result":"` + pad + `"}]`, ``, false},
		{`{"id":` + strings.Repeat("1", maxFoundID+1) + `,"result":"` + pad + `"}`, ``, false},
	} {
		lr := NewLineReader(bytes.NewReader([]byte(c.line+"\n")), 1024)
		lr.FindIDs = true
		var f Frame
		if err := lr.Next(&f); err != nil || !f.Oversize {
			t.Fatalf("line not read as oversized: %v", err)
		}
		if string(f.Found) != c.want || (c.want != "" && f.FoundRequest != c.request) {
			t.Errorf("line %.60s…: found id %q (request %v), want %q (request %v)", c.line, f.Found, f.FoundRequest, c.want, c.request)
		}
	}
}
