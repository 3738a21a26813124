package supervisor_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// roleOutcomeServer is a server written as JSON-RPC lines by hand, so that
// it answers exactly as told: tools/call of "ok" gets a result, "toolerr" a
// tool error, "rpcerr" a JSON-RPC error, "big" a result of 100 KiB,
// "invalid" a response without "jsonrpc", "crash" exits with status 3 and
// "sleep" is never answered. "badreq" sends the host two invalid requests,
// one without "jsonrpc" and one with invalid UTF-8, and answers with the
// error codes it got back for them.
const roleOutcomeServer = "mcpsandbox-test-role=outcome-server"

func serveOutcomes() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	reply := func(id json.RawMessage, member string, v any) {
		b, _ := json.Marshal(v)
		fmt.Printf(`{"jsonrpc":"2.0","id":%s,%q:%s}`+"\n", id, member, b)
	}
	var badCall json.RawMessage // the badreq call waiting for its answers
	bad := map[string]string{}
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Error  *struct {
				Code int `json:"code"`
			} `json:"error"`
			Params struct {
				Name            string `json:"name"`
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || m.ID == nil {
			continue
		}
		if id := string(m.ID); m.Method == "" && strings.HasPrefix(id, `"bad-`) {
			bad[id] = "no error"
			if m.Error != nil {
				bad[id] = fmt.Sprint(m.Error.Code)
			}
			if len(bad) == 2 {
				reply(badCall, "result", map[string]any{"content": []any{map[string]any{"type": "text", "text": bad[`"bad-1"`] + " " + bad[`"bad-2"`]}}})
			}
			continue
		}
		text := func(s string) map[string]any {
			return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
		}
		switch m.Method {
		case "initialize":
			reply(m.ID, "result", map[string]any{"protocolVersion": m.Params.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "outcomes", "version": "1"}})
		case "ping":
			reply(m.ID, "result", map[string]any{})
		case "tools/call":
			switch m.Params.Name {
			case "ok", "limited":
				reply(m.ID, "result", text("ok"))
			case "toolerr":
				res := text("the tool failed")
				res["isError"] = true
				reply(m.ID, "result", res)
			case "rpcerr":
				reply(m.ID, "error", map[string]any{"code": -32603, "message": "boom"})
			case "big":
				reply(m.ID, "result", text(strings.Repeat("x", 100<<10)))
			case "invalid":
				fmt.Printf(`{"id":%s,"result":{}}`+"\n", m.ID)
			case "badreq":
				badCall = m.ID
				fmt.Print(`{"id":"bad-1","method":"roots/list"}` + "\n")
				fmt.Print(`{"jsonrpc":"2.0","method":"roots/list","params":{"x":"` + "\xff" + `"},"id":"bad-2"}` + "\n")
			case "crash":
				os.Exit(3)
			case "sleep":
			}
		default:
			reply(m.ID, "error", map[string]any{"code": -32601, "message": "method not found"})
		}
	}
}

// Every way a host request can end, each driven once: every request gets
// exactly one answer (none when it was cancelled, the host left, or its id
// was reused) with the code of its outcome, and exactly one audit line
// saying that outcome.
func TestEveryEndOneAnswerOneAuditLine(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	call := func(id, tool, req string, pad int) string {
		args := map[string]any{"req": req}
		if pad > 0 {
			args["pad"] = strings.Repeat("p", pad)
		}
		params, _ := json.Marshal(map[string]any{"name": tool, "arguments": args})
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":%s}`, id, params)
	}
	type want struct {
		outcome string
		code    int // of the answer; 0: a result, or none
	}
	check := func(t *testing.T, h *rawHost, path string, wants map[string]want, answers map[string]int) {
		t.Helper()
		got := map[string][]string{}
		for _, l := range readAudit(t, path) {
			req, _ := l.Arguments["req"].(string)
			code := 0
			if l.Code != nil {
				code = *l.Code
			}
			got[req] = append(got[req], fmt.Sprintf("%s %d", l.Outcome, code))
		}
		for req, w := range wants {
			if line := fmt.Sprintf("%s %d", w.outcome, w.code); len(got[req]) != 1 || got[req][0] != line {
				t.Errorf("request %s: audit lines %q, want exactly one %q", req, got[req], line)
			}
		}
		if len(got) != len(wants) {
			t.Errorf("audit lines for %d requests, want %d: %v", len(got), len(wants), got)
		}
		n := h.countByID()
		for id, count := range answers {
			if n[id] != count {
				t.Errorf("id %s: %d answers, want %d", id, n[id], count)
			}
		}
		if len(n) > len(answers) {
			t.Errorf("answers by id %v, want %v", n, answers)
		}
	}
	answerCode := func(t *testing.T, h *rawHost, id string, code int) {
		t.Helper()
		resp := h.response(id)
		if got := errorCode(resp); got != code {
			t.Errorf("id %s answered with code %d, want %d: %s", id, got, code, resp["error"])
		}
		var e struct {
			Data struct {
				Source, Kind string
			}
		}
		json.Unmarshal(resp["error"], &e)
		if code <= -31101 && code >= -31110 && e.Data.Source != "mcpsandbox" {
			t.Errorf("id %s: mcpsandbox's error without its source: %s", id, resp["error"])
		}
	}

	t.Run("running and restarting", func(t *testing.T) {
		pol := testPolicy([]string{exe, roleOutcomeServer})
		pol.AuditLog = filepath.Join(t.TempDir(), "audit.log")
		pol.DenyTools = []string{"secret"}
		pol.RateLimits = []string{"limited=1/1h"}
		pol.MaxConcurrentCalls = 2
		pol.CallTimeout = 2 * time.Second
		pol.MaxMessage = 64 * policy.KiB
		pol.RestartBackoff = policy.Backoff{Min: time.Hour, Max: time.Hour} // the host leaves while it waits
		r := startRelay(t, pol)
		h := r.rawHost()
		h.initialize("2025-11-25")

		h.send(call("1", "ok", "1", 0))
		answerCode(t, h, "1", 0)
		h.send(call("2", "toolerr", "2", 0))
		answerCode(t, h, "2", 0)
		h.send(call("3", "rpcerr", "3", 0))
		answerCode(t, h, "3", -32603)
		h.send(call("4", "secret", "4", 0))
		answerCode(t, h, "4", -31107)
		h.send(call("5", "limited", "5", 0))
		answerCode(t, h, "5", 0)
		h.send(call("6", "limited", "6", 0))
		answerCode(t, h, "6", -31109)
		// Two calls the server never answers fill --max-concurrent-calls
		// until --call-timeout answers them.
		h.send(call("7", "sleep", "7", 0))
		h.send(call("8", "sleep", "8", 0))
		h.send(call("9", "ok", "9", 0))
		answerCode(t, h, "9", -31110)
		answerCode(t, h, "7", -31108)
		answerCode(t, h, "8", -31108)
		h.send(call("10", "big", "10", 0))
		answerCode(t, h, "10", -31103)
		h.send(call("11", "invalid", "11", 0))
		answerCode(t, h, "11", -31105)
		h.send(call("12", "sleep", "12", 0))
		h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12}}`)
		// The server answers only the second call under id 13.
		h.send(call("13", "sleep", "13a", 0))
		h.send(call("13", "ok", "13b", 0))
		answerCode(t, h, "13", 0)
		h.send(call("14", "crash", "14", 0))
		answerCode(t, h, "14", -31101)
		// The restart waits: held messages are bounded by --max-message.
		h.send(call("15", "ok", "15", 40<<10))
		h.send(call("16", "ok", "16", 40<<10))
		answerCode(t, h, "16", -31104)
		r.end()

		check(t, h, pol.AuditLog, map[string]want{
			"1": {"ok", 0}, "2": {"tool-error", 0}, "3": {"error", -32603}, "4": {"denied", -31107},
			"5": {"ok", 0}, "6": {"rate-limited", -31109}, "7": {"timeout", -31108}, "8": {"timeout", -31108},
			"9": {"too-many-calls", -31110}, "10": {"too-large", -31103}, "11": {"invalid-response", -31105},
			"12": {"cancelled", 0}, "13a": {"id-reused", 0}, "13b": {"ok", 0}, "14": {"server-crashed", -31101},
			"15": {"host-gone", 0}, "16": {"queue-full", -31104},
		}, map[string]int{
			"0": 1, "1": 1, "2": 1, "3": 1, "4": 1, "5": 1, "6": 1, "7": 1, "8": 1, "9": 1, "10": 1, "11": 1,
			"12": 0, "13": 1, "14": 1, "15": 0, "16": 1,
		})
	})

	t.Run("stopped", func(t *testing.T) {
		pol := testPolicy([]string{exe, roleOutcomeServer})
		pol.AuditLog = filepath.Join(t.TempDir(), "audit.log")
		pol.Restart = policy.RestartNever
		r := startRelay(t, pol)
		h := r.rawHost()
		h.initialize("2025-11-25")
		h.send(call("1", "sleep", "1", 0))
		h.send(call("2", "crash", "2", 0))
		answerCode(t, h, "1", -31102)
		answerCode(t, h, "2", -31102)
		h.send(call("3", "ok", "3", 0))
		answerCode(t, h, "3", -31102)
		r.end()
		check(t, h, pol.AuditLog, map[string]want{
			"1": {"server-stopped", -31102}, "2": {"server-stopped", -31102}, "3": {"server-stopped", -31102},
		}, map[string]int{"0": 1, "1": 1, "2": 1, "3": 1})
	})
}

// A server's request that is not valid JSON-RPC (no "jsonrpc"), or not JSON
// every host parses (invalid UTF-8, its id last), never reaches the host;
// the server gets the JSON-RPC error for it under its id (-32600, -32700),
// as the spec asks, instead of no answer at all.
func TestInvalidServerRequestsAnswered(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r := startRelay(t, testPolicy([]string{exe, roleOutcomeServer}))
	h := r.rawHost()
	h.initialize("2025-11-25")
	resp := h.call(`1`, "tools/call", `{"name":"badreq","arguments":{}}`)
	var res struct {
		Content []struct{ Text string }
	}
	json.Unmarshal(resp["result"], &res)
	if len(res.Content) != 1 || res.Content[0].Text != "-32600 -32700" {
		t.Errorf("the server got back %s for its invalid requests, want -32600 and -32700", resp["result"])
	}
	r.end()
	h.all.Lock()
	defer h.all.Unlock()
	for _, l := range h.all.lines {
		if strings.Contains(string(l), "roots/list") {
			t.Errorf("an invalid request reached the host: %s", l)
		}
	}
}

// The relay reads nothing of its process: the environment a policy's bare
// NAME takes its value from is the caller's LookupEnv (not os.Environ),
// and what starts the server is the caller's Start.
func TestEnvironmentAndStartAreHandedIn(t *testing.T) {
	pol := testPolicy(exampleCommand(t))
	pol.Unconfined = true
	pol.Env = []string{"MCPSANDBOX_TEST_HANDED_IN", "PATH"}
	t.Setenv("MCPSANDBOX_TEST_HANDED_IN", "from the process")
	specs := make(chan sandbox.Spec, 4)
	hostIn, toRelay := io.Pipe()
	fromRelay, hostOut := io.Pipe()
	defer toRelay.Close()
	done := make(chan supervisor.Outcome, 1)
	go func() {
		out, _ := supervisor.Run(context.Background(), supervisor.Options{
			Policy: pol, HostIn: hostIn, HostOut: hostOut,
			LookupEnv: func(name string) (string, bool) {
				if name == "MCPSANDBOX_TEST_HANDED_IN" {
					return "from the caller", true
				}
				return "", false
			},
			Start: func(s sandbox.Spec, log *slog.Logger) (sandbox.Process, error) {
				specs <- s
				return sandbox.Start(s, log)
			},
		})
		hostOut.Close()
		done <- out
	}()
	var s sandbox.Spec
	select {
	case s = <-specs:
	case <-time.After(waitLimit):
		t.Fatal("the caller's Start was not called")
	}
	if strings.Join(s.Env, " ") != "MCPSANDBOX_TEST_HANDED_IN=from the caller" {
		t.Errorf("the server's environment is %q, want only the caller's value (PATH is not the caller's)", s.Env)
	}
	toRelay.Close()
	go io.Copy(io.Discard, fromRelay)
	select {
	case out := <-done:
		if out.Failed {
			t.Errorf("outcome %+v", out)
		}
	case <-time.After(waitLimit):
		t.Fatal("Run did not return after the host left")
	}
}
