package jsonrpc

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

// FuzzEnvelope checks the envelope scanner against encoding/json: the same
// verdict on validity, the same id, method, result and error, and an id
// splice that keeps the message valid; the strict scan accepts only what
// the loose one does, and only UTF-8. Seeds: testdata/fuzz/FuzzEnvelope.
//
//	go test ./jsonrpc -run '^$' -fuzz FuzzEnvelope
func FuzzEnvelope(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`))
	f.Add([]byte(`[{"jsonrpc":"2.0","id":"a","result":{}},{"jsonrpc":"2.0","method":"n"}]`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var sc Scanner
		var b Batch
		err := sc.Scan(line, &b)
		if len(line) < 4096 {
			if valid := json.Valid(line); valid != (err == nil) {
				t.Fatalf("scanner says %v, encoding/json says valid=%v", err, valid)
			}
		}
		strict := Scanner{Strict: true}
		var sb Batch
		if serr := strict.Scan(line, &sb); serr == nil && (err != nil || !utf8.Valid(line)) {
			t.Fatalf("strict scan accepts what the loose one rejects (%v) or invalid UTF-8", err)
		}
		if err != nil {
			return
		}
		if b.IsArray {
			for i, sp := range b.Spans {
				if !json.Valid(line[sp[0]:sp[1]]) {
					t.Fatalf("batch element %d span %q is not a JSON value", i, line[sp[0]:sp[1]])
				}
			}
			return
		}
		e := &b.Msgs[0]
		var m map[string]json.RawMessage
		if json.Unmarshal(line, &m) != nil {
			if e.Kind != Invalid {
				t.Fatalf("not an object for encoding/json, but kind %v", e.Kind)
			}
			return
		}
		if id, ok := m["id"]; ok && e.IDKind != IDNone {
			if !bytes.Equal(id, e.ID(line)) {
				t.Fatalf("id %q, encoding/json sees %q", e.ID(line), id)
			}
			spliced := Splice(line, e.IDStart, e.IDEnd, []byte(`"mcpsandbox:g1:1"`))
			if !json.Valid(spliced) {
				t.Fatalf("splicing the id broke the message: %q", spliced)
			}
		} else if e.Kind == Request || e.Kind == Response {
			t.Fatalf("kind %v without an id", e.Kind)
		}
		if e.Kind == Invalid {
			return
		}
		var method string
		// Invalid UTF-8 stays raw here (it is relayed untouched), while
		// encoding/json substitutes U+FFFD: compare valid text only.
		if raw, ok := m["method"]; ok && utf8.Valid(raw) && json.Unmarshal(raw, &method) == nil && method != e.MethodString() {
			t.Fatalf("method %q, encoding/json sees %q", e.MethodString(), method)
		}
		for _, name := range []string{"isError", "content", "a"} {
			if got, want := e.ResultMember(name), MemberValue(e.Result, name); !bytes.Equal(got, want) {
				t.Fatalf("result member %s %q, a second scan finds %q", name, got, want)
			}
		}
		_, hasResult := m["result"]
		_, hasError := m["error"]
		if hasResult != e.HasResult || hasError != e.HasError {
			t.Fatalf("result/error presence %v/%v, encoding/json sees %v/%v", e.HasResult, e.HasError, hasResult, hasError)
		}
		if string(m["jsonrpc"]) != `"2.0"` {
			t.Fatalf("classified %v without jsonrpc 2.0", e.Kind)
		}
	})
}

// FuzzFrame checks the bounded line reader: every byte of the input is
// accounted for, in order, as a line or a discarded oversized line, and no
// line handed out exceeds the bound.
//
//	go test ./jsonrpc -run '^$' -fuzz FuzzFrame
func FuzzFrame(f *testing.F) {
	f.Add([]byte("a\nbb\n\nccc"), uint16(2))
	f.Add([]byte("{\"jsonrpc\":\"2.0\"}\n"), uint16(5))
	f.Fuzz(func(t *testing.T, in []byte, max uint16) {
		limit := int(max%64) + 1
		lr := NewLineReader(iotest.OneByteReader(bytes.NewReader(in)), limit)
		var total int64
		for {
			var fr Frame
			err := lr.Next(&fr)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if fr.Oversize {
				if fr.Size <= int64(limit) {
					t.Fatalf("discarded a line of %d bytes with a bound of %d", fr.Size, limit)
				}
				rest := in[total:]
				if !bytes.HasPrefix(rest, fr.Head) || !bytes.HasSuffix(rest[:fr.Size], fr.Tail) {
					t.Fatalf("head/tail do not match the discarded line")
				}
				total += fr.Size
				if total < int64(len(in)) {
					total++ // its newline
				}
				continue
			}
			content := bytes.TrimSuffix(fr.Line, []byte("\n"))
			if len(content) > limit {
				t.Fatalf("line of %d bytes handed out with a bound of %d", len(content), limit)
			}
			if !bytes.HasPrefix(in[total:], fr.Line) {
				t.Fatalf("line %q is not the next input", fr.Line)
			}
			total += int64(len(fr.Line))
		}
		if total != int64(len(in)) {
			t.Fatalf("accounted for %d of %d bytes", total, len(in))
		}
	})
}
