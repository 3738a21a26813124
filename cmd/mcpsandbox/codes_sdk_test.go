package main

import (
	"fmt"
	"strings"
	"testing"
)

// Each of mcpsandbox's host-facing error codes, provoked for real through
// `mcpsandbox run` in front of the codes stand-in (codes_standin_test.go),
// must reach the official SDK clients (Go, codes_goclient_test.go, and
// TypeScript, testdata/tsclient/client.mjs) as that code, message and data,
// and leave their session working: the next call is answered. Before the
// codes left -32001..-32010, the Go client read -32003 and -32004 as
// "connection closed" and gave up on the session.
//
// Both clients run the same cases, named by the step they take; a case's
// outcome (codeOutcome) is checked the same way for both.

// codeCase is one code and the answer a host must see.
type codeCase struct {
	Name      string   // the step both clients run (codes_goclient_test.go, client.mjs)
	code      int64    // the error's code, as README documents it (not the constant: hosts match on the number)
	kind      string   // its data.kind (README's table)
	message   []string // fragments its message holds
	limit     string   // data.limit, where it has one
	afterCode int64    // 0: the next call succeeds; else the error it gets instead
}

// codeSession is one mcpsandbox run shared by its cases, in order.
type codeSession struct {
	name  string
	flags []string
	// maxMessage and maxCalls are what the flags set, for the steps that
	// size a flood or count calls by them.
	maxMessage, maxCalls int
	cases                []codeCase
}

var codeSessions = []codeSession{
	{
		name: "relay",
		flags: []string{"--max-message", "16KiB", "--restart-backoff", "10ms..10ms", "--max-concurrent-calls", "3",
			"--deny-tool", "forbidden", "--rate-limit", "limited=1/1h"},
		maxMessage: 16 << 10, maxCalls: 3,
		cases: []codeCase{
			{Name: "crashed", code: -31101, kind: "server-crashed",
				message: []string{"MCP server process ended", "exited with status 3", "mcpsandbox is restarting it"}},
			{Name: "queue-full", code: -31104, kind: "queue-full",
				message: []string{"MCP server is restarting", "--max-message"}},
			{Name: "too-large-response", code: -31103, kind: "too-large",
				message: []string{"response of", "over mcpsandbox's --max-message 16KiB"}, limit: "16KiB"},
			{Name: "too-large-request", code: -31103, kind: "too-large",
				message: []string{"request of", "over mcpsandbox's --max-message 16KiB", "not relayed"}, limit: "16KiB"},
			{Name: "invalid-utf8", code: -31105, kind: "invalid-response",
				message: []string{"MCP server sent an invalid response"}},
			{Name: "invalid-deep", code: -31105, kind: "invalid-response",
				message: []string{"MCP server sent an invalid response"}},
			{Name: "denied", code: -31107, kind: "denied",
				message: []string{`tool "forbidden" is denied`, "--deny-tool"}},
			{Name: "rate-limited", code: -31109, kind: "rate-limited",
				message: []string{`tool "limited"`, "--rate-limit"}, limit: "1/1h"},
			{Name: "too-many-calls", code: -31110, kind: "too-many-calls",
				message: []string{"--max-concurrent-calls 3"}, limit: "3"},
		},
	},
	{
		name: "timeout", flags: []string{"--call-timeout", "200ms"},
		cases: []codeCase{
			{Name: "timeout", code: -31108, kind: "timeout",
				message: []string{"--call-timeout 200ms", "cancelled"}, limit: "200ms"},
		},
	},
	{
		name: "stopped", flags: []string{"--restart", "never"},
		cases: []codeCase{
			{Name: "stopped", code: -31102, kind: "server-stopped",
				message: []string{"MCP server is down", "exited with status 3", "--restart never"}, afterCode: -31102},
		},
	},
}

// codeOutcome is what a client saw in one case; client.mjs prints it as a
// JSON line.
type codeOutcome struct {
	Case    string         `json:"case"`
	Code    int64          `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data"`
	// Err says what the client got instead of a JSON-RPC error (for the Go
	// client, mcp.ErrConnectionClosed included), or which step failed before.
	Err   string       `json:"error"`
	After afterOutcome `json:"after"`
}

// afterOutcome is the next call on the same session.
type afterOutcome struct {
	OK      bool   `json:"ok"`
	Code    int64  `json:"code"`
	Message string `json:"message"`
	Err     string `json:"error"`
}

// codesArgv is the mcpsandbox command line of a session (this test binary
// as the CLI and as the stand-in, whose gates live in dir). Unconfined:
// the codes are the relay's, and confinement has tests of its own.
func codesArgv(t *testing.T, s codeSession, dir string) []string {
	argv := append([]string{self(t), asCLI, "run", "--unconfined"}, s.flags...)
	return append(argv, "--", self(t), asCodesStandIn, dir)
}

func checkCodeOutcome(t *testing.T, c codeCase, o codeOutcome) {
	t.Helper()
	if o.Err != "" {
		t.Fatalf("no JSON-RPC error %d: %s", c.code, o.Err)
	}
	t.Logf("error %d %q, data %v; next call: %s", o.Code, o.Message, o.Data, o.After.describe())
	if o.Code != c.code {
		t.Errorf("code %d (%q), want %d", o.Code, o.Message, c.code)
	}
	for _, f := range c.message {
		if !strings.Contains(o.Message, f) {
			t.Errorf("message %q does not hold %q", o.Message, f)
		}
	}
	if o.Data["source"] != "mcpsandbox" || o.Data["kind"] != c.kind {
		t.Errorf("data %v, want source mcpsandbox and kind %s", o.Data, c.kind)
	}
	if r, _ := o.Data["reason"].(string); r == "" {
		t.Errorf("data %v has no reason", o.Data)
	}
	if c.limit != "" && o.Data["limit"] != c.limit {
		t.Errorf("data.limit %v, want %s", o.Data["limit"], c.limit)
	}
	if c.kind == "rate-limited" {
		if ms, _ := o.Data["retryAfterMs"].(float64); ms <= 0 {
			t.Errorf("data.retryAfterMs %v, want when the next call is let through", o.Data["retryAfterMs"])
		}
	}
	a := o.After
	switch {
	case c.afterCode == 0 && !a.OK:
		t.Errorf("the next call on the session failed: %s", a.describe())
	case c.afterCode != 0 && a.Code != c.afterCode:
		t.Errorf("the next call on the session got %s, want error %d", a.describe(), c.afterCode)
	}
}

func (a afterOutcome) describe() string {
	switch {
	case a.OK:
		return "a result"
	case a.Err != "":
		return a.Err
	}
	return fmt.Sprintf("error %d %q", a.Code, a.Message)
}
