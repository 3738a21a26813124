package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

func openLog(t *testing.T, c Config) *Log {
	t.Helper()
	if c.Server == "" {
		c.Server = "test"
	}
	l, err := Open(c)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// readLines decodes every line of path.
func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for l := range bytes.Lines(data) {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("audit line is not JSON: %v\n%s", err, l)
		}
		out = append(out, m)
	}
	return out
}

// Each way a request ends gives one line with its outcome and code, the
// keys of the documented format and nothing else; a second end of the same
// request writes nothing.
func TestLogRecordsEachEndOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l := openLog(t, Config{Path: path, Mask: []string{"state"}})
	call := func(name string) *Call {
		p, _ := json.Marshal(map[string]any{"name": name, "arguments": map[string]any{"q": "rain", "token": "SECRET-1"}})
		return l.Begin("tools/call", p, 100)
	}
	call("answered").EndAnswer(Answer{Bytes: 50})
	call("tool-error").EndAnswer(Answer{IsError: true, Bytes: 51})
	call("server-error").EndAnswer(Answer{Error: true, Code: []byte("-32603"), Bytes: 52})
	call("no-code").EndAnswer(Answer{Error: true, Bytes: 53})
	c := call("denied")
	c.EndCode(Denied, -32007, 54)
	c.EndAnswer(Answer{Bytes: 1}) // the request ended already
	c.End(HostGone, 0)
	call("cancelled").End(Cancelled, 0)
	l.Begin("prompts/get", []byte(`{"name":"p","arguments":{"city":"Paris","state":"SECRET-2"}}`), 60).EndAnswer(Answer{IsError: true, Bytes: 61})
	l.Begin("resources/read", []byte(`{"uri":"https://ann:SECRET-3@example.com/r?access_token=SECRET-4&page=2"}`), 70).EndCode(ServerCrashed, -32001, 71)
	l.Begin("tools/call", []byte(`[1]`), 80).End(TooLarge, 0)
	l.BeginOversized("tools/call", 90).EndCode(TooLarge, -32003, 91)
	if c := l.Begin("tools/list", []byte(`{}`), 10); c != nil {
		t.Error("tools/list was audited")
	}
	var none *Log
	none.Begin("tools/call", []byte(`{}`), 1).End(Answered, 0) // no audit log: nothing, and no panic
	l.Close()

	data, _ := os.ReadFile(path)
	for _, s := range []string{"SECRET-1", "SECRET-2", "SECRET-3", "SECRET-4"} {
		if bytes.Contains(data, []byte(s)) {
			t.Errorf("the audit log holds %s in clear", s)
		}
	}
	lines := readLines(t, path)
	var got []string
	for _, m := range lines {
		s := m["method"].(string) + " " + str(m["tool"]) + str(m["prompt"]) + str(m["uri"]) + " " + m["outcome"].(string)
		if c, ok := m["code"]; ok {
			s += " " + jsonText(c)
		}
		s += " " + jsonText(m["bytes_in"]) + "/" + jsonText(m["bytes_out"])
		if n, ok := m["note"]; ok {
			s += " (" + n.(string) + ")"
		}
		got = append(got, s)
		if m["server"] != "test" || m["session"] != l.Session() {
			t.Errorf("line %v: server or session wrong", m)
		}
	}
	want := []string{
		"tools/call answered ok 100/50",
		"tools/call tool-error tool-error 100/51",
		"tools/call server-error error -32603 100/52",
		"tools/call no-code error 100/53",
		"tools/call denied denied -32007 100/54",
		"tools/call cancelled cancelled 100/0",
		"prompts/get p ok 60/61", // isError only makes a tools/call a tool error
		"resources/read https://ann:***@example.com/r?access_token=***&page=2 server-crashed -32001 70/71",
		"tools/call  too-large 80/0 (params are not an object)",
		"tools/call  too-large -32003 90/91 (over the message size limit; not read)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	keys := slices.Sorted(maps.Keys(lines[0]))
	if want := "arguments bytes_in bytes_out duration_ms method outcome server session time tool"; strings.Join(keys, " ") != want {
		t.Errorf("keys %v, want %s", keys, want)
	}
	if args := jsonText(lines[0]["arguments"]); args != `{"q":"rain","token":"***"}` {
		t.Errorf("arguments %s", args)
	}
	if args := jsonText(lines[6]["arguments"]); args != `{"city":"Paris","state":"***"}` {
		t.Errorf("prompt arguments %s: want state masked by the extra glob", args)
	}
}

func str(v any) string { s, _ := v.(string); return s }

func jsonText(v any) string { b, _ := json.Marshal(v); return string(b) }

// Arguments over the bound are cut and their size as sent noted.
func TestLogCutsLargeArguments(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l := openLog(t, Config{Path: path})
	params := `{"name":"big","arguments":{"text":[` + strings.Repeat(`"`+strings.Repeat("x", 200)+`",`, 100) + `1]}}`
	l.Begin("tools/call", []byte(params), len(params)).EndAnswer(Answer{Bytes: 2})
	l.Close()
	m := readLines(t, path)[0]
	if n, _ := m["arguments_bytes"].(float64); int(n) != len(params)-len(`{"name":"big","arguments":}`) {
		t.Errorf("arguments_bytes %v, want the arguments' size as sent", m["arguments_bytes"])
	}
	if len(jsonText(m["arguments"])) > argsMax+1024 {
		t.Errorf("arguments of %d bytes written", len(jsonText(m["arguments"])))
	}
}

// Every Log of one path in a process shares one writer, however the path
// is spelt; it lives until the last of them closes, and a Log opened after
// that gets a new one.
func TestLogsOfOnePathShareAWriter(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	a := openLog(t, Config{Path: path, Server: "a"})
	b := openLog(t, Config{Path: filepath.Join(dir, ".", "x", "..", "audit.log"), Server: "b"})
	if a.w != b.w {
		t.Fatal("two Logs of one file have writers of their own")
	}
	other := openLog(t, Config{Path: filepath.Join(dir, "other.log")})
	if other.w == a.w {
		t.Fatal("two files share a writer")
	}
	other.Close()
	a.Begin("tools/call", []byte(`{"name":"from-a"}`), 1).End(Answered, 1)
	a.Close()
	b.Begin("tools/call", []byte(`{"name":"from-b"}`), 1).End(Answered, 1)
	b.Close()
	var got []string
	for _, m := range readLines(t, path) {
		got = append(got, m["server"].(string)+":"+m["tool"].(string))
	}
	if strings.Join(got, " ") != "a:from-a b:from-b" {
		t.Errorf("lines %v, want a's and b's", got)
	}
	writers.mu.Lock()
	n := len(writers.byPath)
	writers.mu.Unlock()
	if n != 0 {
		t.Errorf("%d writers left after every Log closed", n)
	}
	c := openLog(t, Config{Path: path})
	defer c.Close()
	if c.w == a.w {
		t.Error("a Log opened after the last closed got the closed writer")
	}
}

// While the file cannot be written (another process holds its lock), lines
// beyond the queue are dropped, not waited for; each is counted, and the
// count is written once the file takes lines again.
func TestLogDropsAndCountsWhenTheFileIsHeld(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l := openLog(t, Config{Path: path, Queue: 4})
	holder, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(holder.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	// The writer blocks on its first batch (at most maxBatch lines) and
	// the queue holds 4 more: of these, most must be dropped.
	const sent = maxBatch + 1000
	for range sent {
		l.Begin("tools/call", []byte(`{"name":"t"}`), 1).End(Answered, 1)
	}
	lost := l.Lost()
	if lost < sent-maxBatch-4 {
		t.Errorf("%d of %d lines dropped, want all but at most %d", lost, sent, maxBatch+4)
	}
	holder.Close() // releases the lock
	l.Close()
	written, reported := 0, 0
	for _, m := range readLines(t, path) {
		if n, ok := m["dropped"].(float64); ok {
			reported += int(n)
		} else {
			written++
		}
	}
	if written+reported != sent || reported != lost {
		t.Errorf("%d lines written and %d reported dropped (%d counted), want %d in all", written, reported, lost, sent)
	}
}

// A path that cannot be an audit log stops the start with an error naming
// AuditLog; no path opens nothing.
func TestOpenErrorNamesTheSetting(t *testing.T) {
	_, err := Open(Config{Path: t.TempDir()})
	var fe *field.Error
	if !errors.As(err, &fe) || fe.Field != "AuditLog" || !strings.Contains(err.Error(), "cannot be opened") {
		t.Errorf("a directory: %v, want an error naming AuditLog", err)
	}
	if l, err := Open(Config{}); l != nil || err != nil {
		t.Errorf("no path: %v %v, want no log", l, err)
	}
}

// A tap gets every line as the file does; with no file, only the tap does.
func TestTapGetsEveryLineWithOrWithoutAFile(t *testing.T) {
	for _, withFile := range []bool{true, false} {
		var tapped [][]byte
		path := ""
		if withFile {
			path = filepath.Join(t.TempDir(), "audit.log")
		}
		l := openLog(t, Config{Path: path, Tap: func(line []byte) { tapped = append(tapped, bytes.Clone(line)) }})
		p, _ := json.Marshal(map[string]any{"name": "search", "arguments": map[string]any{"token": "SECRET-1"}})
		l.Begin("tools/call", p, 10).EndAnswer(Answer{Bytes: 5})
		l.Begin("tools/call", p, 10).EndCode(Denied, -31107, 0)
		l.Close()
		if len(tapped) != 2 {
			t.Fatalf("file %v: the tap got %d lines, want 2", withFile, len(tapped))
		}
		for _, line := range tapped {
			if bytes.Contains(line, []byte("SECRET-1")) || !bytes.Contains(line, []byte(`"tool":"search"`)) {
				t.Errorf("file %v: tapped line %s: want the tool named and the secret masked", withFile, line)
			}
		}
		if withFile {
			if got := readLines(t, path); len(got) != 2 {
				t.Errorf("the file has %d lines beside the tap's 2", len(got))
			}
		}
	}
}
