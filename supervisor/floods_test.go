package supervisor_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// The hostile server's floods (internal/hostile/floods.go), run confined
// through the relay: none may grow the log or the supervisor without bound,
// reach the host as a line it cannot parse, or leave a request unanswered.

// hostileRelay starts the relay on the hostile server inside an outer
// cgroup limit (a flood that beats the relay must not take the machine).
func hostileRelay(t *testing.T, tweaks ...func(*policy.Policy)) *relay {
	t.Helper()
	requireConfinement(t)
	pol := testPolicy([]string{testenv.BuildHostile(t)})
	for _, f := range tweaks {
		f(&pol)
	}
	testenv.OuterLimit(t, int64(pol.Memory)+512<<20, pol.Pids+512)
	return startRelay(t, pol)
}

// noServerRequestLimit lifts --server-request-limit, for the tests of the
// bound of server requests pending, which the limit would otherwise keep
// the server from reaching (TestServerRequestFlood tests the limit).
func noServerRequestLimit(p *policy.Policy) { p.ServerRequestLimit = "" }

func flood(t *testing.T, cs *mcp.ClientSession, args map[string]any) (*mcp.CallToolResult, error) {
	t.Helper()
	return callTool(t, cs, "flood", args)
}

var suppressedRE = regexp.MustCompile(`suppressed=(\d+)`)

// suppressed sums the counts of rate-limited records the log reports.
func suppressed(log string) int {
	n := 0
	for _, m := range suppressedRE.FindAllStringSubmatch(log, -1) {
		k, _ := strconv.Atoi(m[1])
		n += k
	}
	return n
}

// A server flooding its stderr or stdout with tiny lines costs a bounded
// log: blank stderr lines are not logged, the rest is rate-limited and the
// log says how much it left out.
func TestFloodLogBounded(t *testing.T) {
	const in = 256 << 10 // on unbounded code: 25 MB (stderr) and 32 MB (stdout) of log
	for _, kind := range []string{"stderr_empty", "stdout_junk"} {
		t.Run(kind, func(t *testing.T) {
			r := hostileRelay(t)
			cs := r.sdkClient("2025-11-25", nil)
			if _, err := flood(t, cs, map[string]any{"kind": kind, "bytes": in}); err != nil {
				t.Fatal(err)
			}
			if got := mustCallTool(t, cs, "echo", map[string]any{"text": "still here"}); got != "still here" {
				t.Errorf("echo after the flood: %q", got)
			}
			cs.Close()
			r.end()
			log := r.logs.String()
			if len(log) > 1<<20 {
				t.Errorf("%d bytes of hostile input made %d bytes of log, want under 1 MiB", in, len(log))
			}
			if kind == "stdout_junk" && suppressed(log) < in/2-1000 {
				t.Errorf("the log reports %d junk lines suppressed, want at least %d", suppressed(log), in/2-1000)
			}
		})
	}
}

// Rate limiting leaves the crash report whole: a server that floods its
// stderr and crashes still has its last stderr lines quoted.
func TestFloodCrashTailIntact(t *testing.T) {
	r := hostileRelay(t)
	cs := r.sdkClient("2025-11-25", nil)
	res, err := flood(t, cs, map[string]any{"kind": "stderr_lines", "bytes": 1 << 20, "crash": true})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != supervisor.CodeServerCrashed {
		t.Fatalf("flood then crash: %v %v, want error %d", res, err, supervisor.CodeServerCrashed)
	}
	r.waitEvent(supervisor.EventReady)
	cs.Close()
	r.end()
	log := r.logs.String()
	if len(log) > 1<<20 {
		t.Errorf("1 MiB of stderr lines made %d bytes of log, want under 1 MiB", len(log))
	}
	if suppressed(log) == 0 {
		t.Error("the log does not say how many stderr lines it suppressed")
	}
	// The last line the server wrote: about 1 MiB of lines numbered from 0.
	last := regexp.MustCompile(`hostile stderr line (\d+)`).FindAllStringSubmatch(log, -1)
	if len(last) == 0 {
		t.Fatal("no stderr line in the log")
	}
	n, _ := strconv.Atoi(last[len(last)-1][1])
	if n < 30000 || !strings.Contains(log, "stderr_tail=") {
		t.Errorf("the crash report's stderr tail ends at line %d, want the server's last lines", n)
	}
}

// Values taken from the server are logged bounded, with their length: a
// 4 MiB id, plain or not UTF-8, makes no log line over a few KiB.
func TestFloodHugeIDLogBounded(t *testing.T) {
	const size = 4 << 20
	r := hostileRelay(t)
	cs := r.sdkClient("2025-11-25", nil)
	for _, kind := range []string{"huge_id", "huge_id_invalid_utf8"} {
		if _, err := flood(t, cs, map[string]any{"kind": kind, "bytes": size}); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
	}
	cs.Close()
	r.end()
	log := r.logs.String()
	for _, line := range strings.Split(log, "\n") {
		if len(line) > 4<<10 {
			t.Errorf("log line of %d bytes: %.200s…", len(line), line)
		}
	}
	if !strings.Contains(log, fmt.Sprintf("(%d bytes)", size+2)) {
		t.Error("the log does not give the length of the cut id")
	}
}

// A server asking the host more than mcpsandbox tracks gets the excess
// answered with an error naming the bound; the host sees at most that many
// requests, and at the crash at most that many cancellations.
func TestFloodServerRequestsCapped(t *testing.T) {
	const sent, bound = 3000, 1024
	r := hostileRelay(t, noServerRequestLimit)
	h := r.rawHost()
	h.initialize("2025-06-18")
	countUntil := func(id, method string) (int, map[string]json.RawMessage) {
		t.Helper()
		n := 0
		resp := h.next("response "+id, func(m map[string]json.RawMessage) bool {
			if string(m["method"]) == `"`+method+`"` {
				n++
			}
			return string(m["id"]) == id && m["method"] == nil
		})
		h.backlog = nil
		return n, resp
	}
	h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flood","arguments":{"kind":"sampling","count":%d}}}`, sent))
	if n, resp := countUntil(`1`, "sampling/createMessage"); n != bound || resp["result"] == nil {
		t.Fatalf("the host got %d of the server's %d sampling requests (want %d) and %s", n, sent, bound, resp)
	}
	var answers struct {
		Errors    int    `json:"errors"`
		LastError string `json:"last_error"`
	}
	resp := h.call(`2`, "tools/call", `{"name":"flood_answers","arguments":{}}`)
	var res mcp.CallToolResult
	if err := json.Unmarshal(resp["result"], &res); err != nil || len(res.Content) != 1 {
		t.Fatalf("flood_answers: %s", resp)
	}
	json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &answers)
	if answers.Errors != sent-bound || !strings.Contains(answers.LastError, strconv.Itoa(bound)) {
		t.Errorf("the server got %d errors (want %d), the last %q (want it to name %d)", answers.Errors, sent-bound, answers.LastError, bound)
	}
	h.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"flood","arguments":{"kind":"sampling","count":1,"crash":true}}}`)
	n, resp := countUntil(`3`, "notifications/cancelled")
	if errorCode(resp) != supervisor.CodeServerCrashed {
		t.Errorf("the call the server crashed in: %s", resp)
	}
	r.waitEvent(supervisor.EventReady)
	// Every cancellation is written before the restart, so before this answer.
	h.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"after"}}}`)
	more, _ := countUntil(`4`, "notifications/cancelled")
	if n+more != bound {
		t.Errorf("at the crash the host got %d cancellations, want %d", n+more, bound)
	}
	r.end()
	h.checkOneAnswerEach()
}

// A response that a host's JSON parser would reject (nested deeper than
// mcpsandbox's bound, or with invalid UTF-8 in a string) is logged, not
// relayed, and its request is answered with CodeInvalidResponse, wherever
// the id sits.
func TestFloodInvalidJSONAnswered(t *testing.T) {
	for kind, logged := range map[string]string{"deep_nesting": "nesting too deep", "invalid_utf8": "invalid UTF-8 in string"} {
		t.Run(kind, func(t *testing.T) {
			r := hostileRelay(t)
			cs := r.sdkClient("2025-11-25", nil)
			res, err := flood(t, cs, map[string]any{"kind": kind})
			var werr *jsonrpc.Error
			if !errors.As(err, &werr) || werr.Code != supervisor.CodeInvalidResponse {
				t.Errorf("got %v %v, want error %d", res, err, supervisor.CodeInvalidResponse)
			}
			if got := mustCallTool(t, cs, "echo", map[string]any{"text": "fine"}); got != "fine" {
				t.Errorf("echo after: %q", got)
			}
			cs.Close()
			r.end()
			if !strings.Contains(r.logs.String(), logged) {
				t.Errorf("the log does not say %q", logged)
			}
		})
	}
}

// An oversized response whose id is neither in the kept head nor tail is
// still answered with CodeMessageTooLarge: the id is found as it streams.
func TestFloodOversizedIDInTheMiddle(t *testing.T) {
	r := hostileRelay(t)
	h := r.rawHost()
	h.initialize("2025-06-18")
	size := int(policy.Default().MaxMessage) + 4<<20
	resp := h.call(`1`, "tools/call", fmt.Sprintf(`{"name":"flood","arguments":{"kind":"oversized_mid_id","bytes":%d}}`, size))
	if errorCode(resp) != supervisor.CodeMessageTooLarge {
		t.Fatalf("got %.300s, want error %d", resp, supervisor.CodeMessageTooLarge)
	}
	if echo := h.call(`2`, "tools/call", `{"name":"echo","arguments":{"text":"after"}}`); !strings.Contains(string(echo["result"]), "after") {
		t.Errorf("echo after the oversized response: %s", echo)
	}
	r.end()
	h.checkOneAnswerEach()
}

// A server that stops reading its input but keeps writing (here requests
// to the host, each refused past the bound with an answer it never reads)
// has its output relayed until what waits to be written to it fills its
// queue; it is then hung: killed and restarted with that reason. The relay
// never waits on it: before, its reader of the server's output blocked on
// the refusals, and with it the session, with no heartbeat to end it.
func TestDeafServerRestartedAsHung(t *testing.T) {
	const bound = 1024
	r := hostileRelay(t, noServerRequestLimit)
	h := r.rawHost()
	h.initialize("2025-06-18")
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flood","arguments":{"kind":"sampling","count":30000,"deaf":true}}}`)
	n := 0
	resp := h.next("response 1", func(m map[string]json.RawMessage) bool {
		if string(m["method"]) == `"sampling/createMessage"` {
			n++
		}
		return string(m["id"]) == `1` && m["method"] == nil
	})
	if n != bound {
		t.Errorf("the host got %d of the deaf server's requests, want %d (the bound of those pending)", n, bound)
	}
	if errorCode(resp) != supervisor.CodeServerCrashed || !strings.Contains(string(resp["error"]), "stopped reading its input") {
		t.Errorf("the call the server went deaf in: %s", resp)
	}
	if ex := r.waitEvent(supervisor.EventExited); !strings.Contains(ex.Reason, "hang: it stopped reading its input") {
		t.Errorf("the server ended with %q, want it killed as hung for not reading", ex.Reason)
	}
	r.waitEvent(supervisor.EventReady)
	if echo := h.call(`2`, "tools/call", `{"name":"echo","arguments":{"text":"after"}}`); !strings.Contains(string(echo["result"]), "after") {
		t.Errorf("echo after the restart: %s", echo)
	}
	r.end()
	h.checkOneAnswerEach()
}
