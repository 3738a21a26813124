package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"
)

// String names a kind in failure messages; routing never prints one.
func (k Kind) String() string {
	return [...]string{"invalid", "request", "notification", "response"}[k]
}

func scanOne(t *testing.T, line string) (Envelope, error) {
	t.Helper()
	var sc Scanner
	var b Batch
	err := sc.Scan([]byte(line), &b)
	if len(b.Msgs) == 0 {
		return Envelope{}, err
	}
	return b.Msgs[0], err
}

func TestEnvelopeClassifiesMessages(t *testing.T) {
	cases := []struct {
		line   string
		kind   Kind
		id     string
		method string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, Request, `1`, "tools/list"},
		{`{"method":"ping","id":"abc","jsonrpc":"2.0"}`, Request, `"abc"`, "ping"},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, Notification, ``, "notifications/initialized"},
		{`{"jsonrpc":"2.0","id":7,"result":{"id":99,"method":"x"}}`, Response, `7`, ""},
		{`{"result":{"big":[1,2,{"id":3}]},"jsonrpc":"2.0","id":12345678901234567890}`, Response, `12345678901234567890`, ""},
		{`{"jsonrpc":"2.0","id":-1.5e3,"error":{"code":-32601,"message":"no"}}`, Response, `-1.5e3`, ""},
		{" \t{\"jsonrpc\" : \"2.0\" , \"id\" : \"a\\\"b\" , \"method\" : \"m\" }\r\n", Request, `"a\"b"`, "m"},
		{`{"jsonrpc":"2.0","\u0069d":5,"method":"x"}`, Request, `5`, "x"},
	}
	for _, c := range cases {
		e, err := scanOne(t, c.line)
		if err != nil {
			t.Errorf("%s: %v", c.line, err)
			continue
		}
		if e.Kind != c.kind {
			t.Errorf("%s: kind %v (%s), want %v", c.line, e.Kind, e.Problem, c.kind)
		}
		if got := string(e.ID([]byte(c.line))); got != c.id {
			t.Errorf("%s: id %q, want %q", c.line, got, c.id)
		}
		if got := e.MethodString(); got != c.method {
			t.Errorf("%s: method %q, want %q", c.line, got, c.method)
		}
	}
}

func TestEnvelopeRejectsNonJSONRPC(t *testing.T) {
	invalidJSON := []string{
		`hello world`,
		`{"jsonrpc":"2.0","id":1,"result":{}`,
		`{"jsonrpc":"2.0","id":1,"result":{}} trailing`,
		`{"jsonrpc":"2.0","id":01,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"result":"tab	inside"}`,
		`{"jsonrpc":"2.0","id":1,"result":"bad \x escape"}`,
		`{"jsonrpc":"2.0","id":1,"result":[1,]}`,
		`{"jsonrpc":"2.0","id":1,"result":tru}`,
		`{"jsonrpc":"2.0",,"id":1}`,
		`{"jsonrpc":"2.0","id":1.,"result":1}`,
		"",
	}
	for _, line := range invalidJSON {
		if _, err := scanOne(t, line); err == nil {
			t.Errorf("%q scanned as valid JSON", line)
		}
		if json.Valid([]byte(line)) {
			t.Errorf("test case %q is valid JSON after all", line)
		}
	}
	notRPC := []string{
		`42`,
		`{"id":1,"result":{}}`,
		`{"jsonrpc":"1.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":{"x":1},"method":"m"}`,
		`{"jsonrpc":"2.0","id":1}`,
		`{"jsonrpc":"2.0","id":1,"result":1,"error":{}}`,
		`{"jsonrpc":"2.0","method":5}`,
		`{"jsonrpc":"2.0","result":{}}`,
	}
	for _, line := range notRPC {
		e, err := scanOne(t, line)
		if err != nil {
			t.Errorf("%q: valid JSON reported as %v", line, err)
		}
		if e.Kind != Invalid || e.Problem == "" {
			t.Errorf("%q: kind %v, want invalid with a reason", line, e.Kind)
		}
	}
}

func TestEnvelopeAgreesWithEncodingJSONOnValidity(t *testing.T) {
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"a":[true,false,null,1e10,-0.5,"\u00e9\n"]}}`,
		`{"jsonrpc":"2.0","id":1,"result":"` + strings.Repeat("x", 100) + `\"` + strings.Repeat("é", 50) + `"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]`,
		`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 500) + strings.Repeat("]", 500) + `}`,
	} {
		var sc Scanner
		var b Batch
		if err := sc.Scan([]byte(line), &b); err != nil || !json.Valid([]byte(line)) {
			t.Errorf("%.60s: scanner %v, encoding/json valid=%v", line, err, json.Valid([]byte(line)))
		}
	}
}

func TestEnvelopeBatch(t *testing.T) {
	line := []byte(`[{"jsonrpc":"2.0","id":1,"method":"a"}, {"jsonrpc":"2.0","id":"x","result":{}} ,{"jsonrpc":"2.0","method":"n"}]`)
	var sc Scanner
	var b Batch
	if err := sc.Scan(line, &b); err != nil {
		t.Fatal(err)
	}
	if !b.IsArray || len(b.Msgs) != 3 || len(b.Spans) != 3 {
		t.Fatalf("batch: array=%v msgs=%d spans=%d", b.IsArray, len(b.Msgs), len(b.Spans))
	}
	want := []Kind{Request, Response, Notification}
	for i, e := range b.Msgs {
		if e.Kind != want[i] {
			t.Errorf("element %d: %v, want %v", i, e.Kind, want[i])
		}
		elem := line[b.Spans[i][0]:b.Spans[i][1]]
		if !json.Valid(elem) || elem[0] != '{' || elem[len(elem)-1] != '}' {
			t.Errorf("element %d span %q is not the object", i, elem)
		}
	}
	if got := string(b.Msgs[1].ID(line)); got != `"x"` {
		t.Errorf("element 1 id %q", got)
	}
}

func TestIDKeyMatchesEscapedAndPlainStrings(t *testing.T) {
	if IDKey([]byte(`"a\u0062"`), true) != IDKey([]byte(`"ab"`), false) {
		t.Error(`"a\u0062" and "ab" are the same id but get different keys`)
	}
	if IDKey([]byte(`1`), false) == IDKey([]byte(`"1"`), false) {
		t.Error(`1 and "1" are different ids but share a key`)
	}
}

func TestTailIDFindsOnlyTheTopLevelID(t *testing.T) {
	cases := map[string]string{
		`xxxxx"},"jsonrpc":"2.0","id":42}`:                `42`,
		`xxxxx"},"jsonrpc":"2.0","id" : "req-7" }` + "\r": `"req-7"`,
		`xxxxx","nested":{"id":5}}`:                       "",
		`xxxxx"]}}`:                                       "",
		`xxxxx","id":5,"jsonrpc":"2.0"}`:                  "",
	}
	for tail, want := range cases {
		if got := string(TailID([]byte(tail))); got != want {
			t.Errorf("tailID(%q) = %q, want %q", tail, got, want)
		}
	}
}

func TestMemberValue(t *testing.T) {
	obj := []byte(`{"reason":"x","requestId":"mcpsandbox:g1:4","n":{"requestId":1}}`)
	if got := string(MemberValue(obj, "requestId")); got != `"mcpsandbox:g1:4"` {
		t.Errorf("requestId = %q", got)
	}
	if got := MemberValue(obj, "missing"); got != nil {
		t.Errorf("missing member = %q", got)
	}
	if OffsetIn(obj, MemberValue(obj, "requestId")) != strings.Index(string(obj), `"mcpsandbox:g1:4"`) {
		t.Error("offsetIn does not locate the member value")
	}
}
