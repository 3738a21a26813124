package supervisor

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
//	go test ./supervisor -run '^$' -fuzz FuzzEnvelope
func FuzzEnvelope(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`))
	f.Add([]byte(`[{"jsonrpc":"2.0","id":"a","result":{}},{"jsonrpc":"2.0","method":"n"}]`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var sc scanner
		var b batch
		err := sc.scanLine(line, &b)
		if len(line) < 4096 {
			if valid := json.Valid(line); valid != (err == nil) {
				t.Fatalf("scanner says %v, encoding/json says valid=%v", err, valid)
			}
		}
		strict := scanner{strict: true}
		var sb batch
		if serr := strict.scanLine(line, &sb); serr == nil && (err != nil || !utf8.Valid(line)) {
			t.Fatalf("strict scan accepts what the loose one rejects (%v) or invalid UTF-8", err)
		}
		if err != nil {
			return
		}
		if b.isArray {
			for i, sp := range b.spans {
				if !json.Valid(line[sp[0]:sp[1]]) {
					t.Fatalf("batch element %d span %q is not a JSON value", i, line[sp[0]:sp[1]])
				}
			}
			return
		}
		e := &b.msgs[0]
		var m map[string]json.RawMessage
		if json.Unmarshal(line, &m) != nil {
			if e.kind != kindInvalid {
				t.Fatalf("not an object for encoding/json, but kind %v", e.kind)
			}
			return
		}
		if id, ok := m["id"]; ok && e.idKind != idNone {
			if !bytes.Equal(id, e.id(line)) {
				t.Fatalf("id %q, encoding/json sees %q", e.id(line), id)
			}
			spliced := splice(line, e.idStart, e.idEnd, quoteID(relayPrefix+"g1:1"))
			if !json.Valid(spliced) {
				t.Fatalf("splicing the id broke the message: %q", spliced)
			}
		} else if e.kind == kindRequest || e.kind == kindResponse {
			t.Fatalf("kind %v without an id", e.kind)
		}
		if e.kind == kindInvalid {
			return
		}
		var method string
		// Invalid UTF-8 stays raw here (it is relayed untouched), while
		// encoding/json substitutes U+FFFD: compare valid text only.
		if raw, ok := m["method"]; ok && utf8.Valid(raw) && json.Unmarshal(raw, &method) == nil && method != e.methodString() {
			t.Fatalf("method %q, encoding/json sees %q", e.methodString(), method)
		}
		_, hasResult := m["result"]
		_, hasError := m["error"]
		if hasResult != e.hasResult || hasError != e.hasError {
			t.Fatalf("result/error presence %v/%v, encoding/json sees %v/%v", e.hasResult, e.hasError, hasResult, hasError)
		}
		if string(m["jsonrpc"]) != `"2.0"` {
			t.Fatalf("classified %v without jsonrpc 2.0", e.kind)
		}
	})
}

// FuzzFrame checks the bounded line reader: every byte of the input is
// accounted for, in order, as a line or a discarded oversized line, and no
// line handed out exceeds the bound.
//
//	go test ./supervisor -run '^$' -fuzz FuzzFrame
func FuzzFrame(f *testing.F) {
	f.Add([]byte("a\nbb\n\nccc"), uint16(2))
	f.Add([]byte("{\"jsonrpc\":\"2.0\"}\n"), uint16(5))
	f.Fuzz(func(t *testing.T, in []byte, max uint16) {
		limit := int(max%64) + 1
		lr := newLineReader(iotest.OneByteReader(bytes.NewReader(in)), limit)
		var total int64
		for {
			var fr frame
			err := lr.next(&fr)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if fr.oversize {
				if fr.size <= int64(limit) {
					t.Fatalf("discarded a line of %d bytes with a bound of %d", fr.size, limit)
				}
				rest := in[total:]
				if !bytes.HasPrefix(rest, fr.head) || !bytes.HasSuffix(rest[:fr.size], fr.tail) {
					t.Fatalf("head/tail do not match the discarded line")
				}
				total += fr.size
				if total < int64(len(in)) {
					total++ // its newline
				}
				continue
			}
			content := bytes.TrimSuffix(fr.line, []byte("\n"))
			if len(content) > limit {
				t.Fatalf("line of %d bytes handed out with a bound of %d", len(content), limit)
			}
			if !bytes.HasPrefix(in[total:], fr.line) {
				t.Fatalf("line %q is not the next input", fr.line)
			}
			total += int64(len(fr.line))
		}
		if total != int64(len(in)) {
			t.Fatalf("accounted for %d of %d bytes", total, len(in))
		}
	})
}
