package supervisor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// auditLine is one line of --audit-log as a reader decodes it.
type auditLine struct {
	Time       string         `json:"time"`
	Server     string         `json:"server"`
	Session    string         `json:"session"`
	Method     string         `json:"method"`
	Tool       string         `json:"tool"`
	Prompt     string         `json:"prompt"`
	URI        string         `json:"uri"`
	Arguments  map[string]any `json:"arguments"`
	Outcome    string         `json:"outcome"`
	Code       *int           `json:"code"`
	DurationMS *float64       `json:"duration_ms"`
	BytesIn    int            `json:"bytes_in"`
	BytesOut   int            `json:"bytes_out"`
	From       string         `json:"from"` // "server": a line of the server's own request (docs/server-requests.md)
}

// readAudit decodes the audit log, checking it is mode 0600 and holds none
// of secrets anywhere.
func readAudit(t *testing.T, path string, secrets ...string) []auditLine {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("audit log mode %v, want 0600", fi.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if bytes.Contains(data, []byte(s)) {
			t.Errorf("the audit log holds the secret %q in clear:\n%s", s, data)
		}
	}
	var lines []auditLine
	for l := range bytes.Lines(data) {
		var a auditLine
		if err := json.Unmarshal(l, &a); err != nil {
			t.Fatalf("audit line is not JSON: %v\n%s", err, l)
		}
		if _, err := time.Parse("2006-01-02T15:04:05.000Z", a.Time); err != nil {
			t.Errorf("time %q is not RFC 3339 UTC with milliseconds", a.Time)
		}
		if a.From == "server" {
			continue // the server's own request (roots/list of server-filesystem): not a host call
		}
		if a.Server != "test" || len(a.Session) < 16 || a.DurationMS == nil || *a.DurationMS < 0 || a.BytesIn <= 0 {
			t.Errorf("audit line lacks server, session, duration or bytes_in: %s", l)
		}
		if len(lines) > 0 && a.Session != lines[0].Session {
			t.Errorf("session %q changed to %q within one host session", lines[0].Session, a.Session)
		}
		lines = append(lines, a)
	}
	return lines
}

// wireLog keeps every line written one way, as the other side reads it.
type wireLog struct {
	mu      sync.Mutex
	buf     []byte
	lines   [][]byte
	changed chan struct{} // closed and replaced when a line is added
}

// waitFor waits until n lines satisfy match.
func (w *wireLog) waitFor(t *testing.T, match func([]byte) bool, n int) {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		w.mu.Lock()
		found := 0
		for _, l := range w.lines {
			if match(l) {
				found++
			}
		}
		if w.changed == nil {
			w.changed = make(chan struct{})
		}
		changed := w.changed
		w.mu.Unlock()
		if found >= n {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("the host never sent %d such lines", n)
		}
	}
}

func (w *wireLog) add(p []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return
		}
		w.lines = append(w.lines, bytes.Clone(w.buf[:i]))
		w.buf = w.buf[i+1:]
		if w.changed != nil {
			close(w.changed)
			w.changed = nil
		}
	}
}

type teeWriter struct {
	w   io.WriteCloser
	log *wireLog
}

func (t teeWriter) Close() error { return t.w.Close() }

func (t teeWriter) Write(p []byte) (int, error) { t.log.add(p); return t.w.Write(p) }

type teeReader struct {
	r   io.ReadCloser
	log *wireLog
}

func (t teeReader) Close() error { return t.r.Close() }

func (t teeReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.log.add(p[:n])
	return n, err
}

// wireSizes maps each audited host request to the sizes of its line and of
// the answer the host read, in the order the host sent them.
func wireSizes(t *testing.T, sent, got *wireLog) (in, out []int) {
	t.Helper()
	answers := map[string]int{}
	for _, l := range got.lines {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(l, &m) == nil && m.Method == "" && m.ID != nil {
			answers[string(m.ID)] = len(l)
		}
	}
	for _, l := range sent.lines {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(l, &m)
		switch m.Method {
		case "tools/call", "prompts/get", "resources/read":
			in, out = append(in, len(l)), append(out, answers[string(m.ID)])
		}
	}
	return in, out
}

// server-everything through the relay with --audit-log, driven by the Go
// SDK client: an answered call with secrets nested in its arguments, a
// denied one, a tool error, a JSON-RPC error from the server for a URI with
// credentials in it, and a prompt whose argument --audit-mask hides. Each
// call is one line, written with its outcome, code and the bytes on the
// wire, and no secret reaches the file.
func TestAuditLogServerEverything(t *testing.T) {
	pol := npmPolicy(t, "server-everything", "stdio")
	path := filepath.Join(t.TempDir(), "audit.log")
	pol.AuditLog, pol.DenyTools, pol.AuditMask = path, []string{"get-sum"}, []string{"state"}
	r := startRelay(t, pol)
	sent, got := &wireLog{}, &wireLog{}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1.0"}, nil)
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: teeReader{r.fromRly, got}, Writer: teeWriter{r.toRelay, sent}}, nil)
	if err != nil {
		t.Fatal(err)
	}

	secrets := []string{"SECRET-TOKEN-1", "SECRET-PW-2", "SECRET-KEY-3", "SECRET-PW-4", "SECRET-TOKEN-5", "SECRET-STATE-6"}
	echoed := mustCallTool(t, cs, "echo", map[string]any{
		"message": "hello audit",
		"token":   secrets[0],
		"nested":  map[string]any{"Password": secrets[1], "list": []any{map[string]any{"api_key": secrets[2]}, "plain"}},
	})
	if !strings.Contains(echoed, "hello audit") {
		t.Errorf("echo: %q", echoed)
	}
	var werr *jsonrpc.Error
	if _, err := callTool(t, cs, "get-sum", map[string]any{"a": 1, "b": 2}); !errors.As(err, &werr) || werr.Code != supervisor.CodePolicyDenied {
		t.Fatalf("denied get-sum: %v", err)
	}
	if res, err := callTool(t, cs, "no-such-tool", nil); err != nil || !res.IsError {
		t.Fatalf("no-such-tool: %v %+v, want a tool error result", err, res)
	}
	uri := "https://ann:" + secrets[3] + "@example.com/r?access_token=" + secrets[4] + "&page=2"
	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	var rerr *jsonrpc.Error
	if !errors.As(err, &rerr) {
		t.Fatalf("resources/read of an unknown URI: %v, want a JSON-RPC error", err)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "args-prompt", Arguments: map[string]string{"city": "Paris", "state": secrets[5]}}); err != nil {
		t.Fatalf("prompts/get: %v", err)
	}
	cs.Close()
	if out := r.end(); out.Failed {
		t.Errorf("outcome %+v", out)
	}

	lines := readAudit(t, path, secrets...)
	if len(lines) != 5 {
		t.Fatalf("%d audit lines, want 5: %+v", len(lines), lines)
	}
	code := func(l auditLine) int {
		if l.Code == nil {
			return 0
		}
		return *l.Code
	}
	for i, want := range []struct {
		method, name, outcome string
		code                  int
	}{
		{"tools/call", "echo", "ok", 0},
		{"tools/call", "get-sum", "denied", supervisor.CodePolicyDenied},
		{"tools/call", "no-such-tool", "tool-error", 0},
		{"resources/read", "https://ann:***@example.com/r?access_token=***&page=2", "error", int(rerr.Code)},
		{"prompts/get", "args-prompt", "ok", 0},
	} {
		l := lines[i]
		if name := l.Tool + l.Prompt + l.URI; l.Method != want.method || name != want.name || l.Outcome != want.outcome || code(l) != want.code {
			t.Errorf("line %d: %s %s %s code %d; want %s %s %s code %d", i+1, l.Method, name, l.Outcome, code(l), want.method, want.name, want.outcome, want.code)
		}
	}
	args, _ := json.Marshal(lines[0].Arguments)
	if want := `{"message":"hello audit","nested":{"Password":"***","list":[{"api_key":"***"},"plain"]},"token":"***"}`; string(args) != want {
		t.Errorf("echo arguments in the audit log %s, want %s", args, want)
	}
	if p := lines[4].Arguments; p["city"] != "Paris" || p["state"] != "***" {
		t.Errorf("prompt arguments %v: want city kept and state masked by --audit-mask", p)
	}
	in, out := wireSizes(t, sent, got)
	for i, l := range lines {
		if i < len(in) && (l.BytesIn != in[i] || l.BytesOut != out[i]) {
			t.Errorf("line %d: bytes_in %d bytes_out %d; the host sent %d and read %d", i+1, l.BytesIn, l.BytesOut, in[i], out[i])
		}
	}
}

// Calls mcpsandbox ends itself: a --call-timeout, a crash of the server
// mid-call, and the host cancelling one.
func TestAuditLogTimeoutCrashAndCancel(t *testing.T) {
	pol := testPolicy(exampleCommand(t))
	path := filepath.Join(t.TempDir(), "audit.log")
	pol.AuditLog, pol.CallTimeout = path, 300*time.Millisecond
	r := startRelay(t, pol)
	sent := &wireLog{}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1.0"}, nil)
	cctx, ccancel := context.WithTimeout(context.Background(), waitLimit)
	defer ccancel()
	cs, err := c.Connect(cctx, &mcp.IOTransport{Reader: r.fromRly, Writer: teeWriter{r.toRelay, sent}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var werr *jsonrpc.Error
	if _, err := callTool(t, cs, "sleep", map[string]any{"ms": 60000}); !errors.As(err, &werr) || werr.Code != supervisor.CodeCallTimeout {
		t.Fatalf("sleep: %v, want the call timeout", err)
	}
	if _, err := callTool(t, cs, "crash", map[string]any{"code": 3}); !errors.As(err, &werr) || werr.Code != supervisor.CodeServerCrashed {
		t.Fatalf("crash: %v, want the crash error", err)
	}
	r.waitEvent(supervisor.EventReady)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 60000}})
		done <- err
	}()
	// The pipe to the relay is unbuffered: once the host's write of the
	// call returned, the relay has read it, and reads the cancellation after.
	sent.waitFor(t, func(l []byte) bool { return bytes.Count(l, []byte(`"tools/call"`)) > 0 }, 3)
	cancel()
	<-done
	sent.waitFor(t, func(l []byte) bool { return bytes.Contains(l, []byte(`"notifications/cancelled"`)) }, 1)
	cs.Close()
	r.end()
	lines := readAudit(t, path)
	outcomes := []string{}
	for _, l := range lines {
		s := l.Tool + ":" + l.Outcome
		if l.Code != nil {
			s += ":" + jsonNumber(*l.Code)
		}
		outcomes = append(outcomes, s)
	}
	want := "sleep:timeout:-31108 crash:server-crashed:-31101 sleep:cancelled"
	if strings.Join(outcomes, " ") != want {
		t.Errorf("audit outcomes %v, want %s", outcomes, want)
	}
}

func jsonNumber(n int) string { b, _ := json.Marshal(n); return string(b) }
