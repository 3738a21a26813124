package supervisor_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// errData decodes the data of an mcpsandbox error.
func errData(t *testing.T, raw json.RawMessage) (d struct {
	Reason       string `json:"reason"`
	Limit        string `json:"limit"`
	RetryAfterMs int64  `json:"retryAfterMs"`
}) {
	t.Helper()
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Errorf("error data %s: %v", raw, err)
	}
	return d
}

// Each tool has its own budget, the most specific glob sets it, and a call
// over it is answered by mcpsandbox: the server never sees it.
func TestRateLimit(t *testing.T) {
	pol := testPolicy(rulesServer(t))
	pol.RateLimits = []string{"2/1h", "*_file=3/1h", "write_*=1/1h"}
	r := startRelay(t, pol)
	cs := r.sdkClient("2025-11-25", nil)
	for tool, n := range map[string]int{"write_file": 1, "read_file": 3} {
		for range n {
			mustCallTool(t, cs, tool, nil)
		}
		_, err := callTool(t, cs, tool, nil)
		werr := wantRefused(t, tool+" over its limit", err, supervisor.CodeRateLimited, "rate limited", `"`+tool+`"`, "RateLimits")
		d := errData(t, werr.Data)
		if want := map[string]string{"write_file": "1/1h", "read_file": "3/1h"}[tool]; d.Reason != "rate limited" || d.Limit != want || d.RetryAfterMs <= 0 || d.RetryAfterMs > time.Hour.Milliseconds() {
			t.Errorf("%s: error data %s; want limit %s and a retryAfterMs within the hour", tool, werr.Data, want)
		}
	}
	// count has the default budget of 2: this is its first call.
	if got := serverCount(t, cs, "tools/call"); got != "4" {
		t.Errorf("the server got %s tools/call before count, want 4: a refused one reached it", got)
	}
	cs.Close()
	r.end()
}

// The budget refills: with 1 call per 300ms, the call refused now is let
// through once retryAfterMs has passed. The wait is the limit under test,
// not a stand-in for synchronisation.
func TestRateLimitRefills(t *testing.T) {
	pol := testPolicy(rulesServer(t))
	pol.RateLimits = []string{"1/300ms"}
	r := startRelay(t, pol)
	cs := r.sdkClient("2025-11-25", nil)
	mustCallTool(t, cs, "read_file", nil)
	var d struct {
		RetryAfterMs int64 `json:"retryAfterMs"`
	}
	for refused := 0; ; refused++ {
		_, err := callTool(t, cs, "read_file", nil)
		if err == nil {
			if refused == 0 {
				t.Error("the second call within 300ms was let through")
			}
			break
		}
		werr := wantRefused(t, "read_file again", err, supervisor.CodeRateLimited)
		if werr.Code == 0 {
			break
		}
		json.Unmarshal(werr.Data, &d)
		if d.RetryAfterMs <= 0 || d.RetryAfterMs > 300 {
			t.Fatalf("retryAfterMs %d, want within 300", d.RetryAfterMs)
		}
		time.Sleep(time.Duration(d.RetryAfterMs) * time.Millisecond)
	}
	cs.Close()
	r.end()
}

// Over --max-concurrent-calls a tools/call is answered at once while the
// others go on; they complete, and their slots are given back. Calls are
// known to be at the server by their progress notification.
func TestMaxConcurrentCalls(t *testing.T) {
	pol := testPolicy(rulesServer(t))
	pol.MaxConcurrentCalls = 2
	r := startRelay(t, pol)
	atServer := make(chan struct{}, 8)
	cs := r.sdkClient("2025-11-25", &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { atServer <- struct{}{} },
	})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	var wg sync.WaitGroup
	results := make(chan string, 2)
	for i := range 2 {
		wg.Go(func() {
			p := &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{}}
			p.SetProgressToken(i + 1)
			res, err := cs.CallTool(ctx, p)
			if err != nil {
				results <- err.Error()
				return
			}
			results <- toolText(t, res)
		})
	}
	for range 2 {
		select {
		case <-atServer:
		case <-ctx.Done():
			t.Fatal("the two calls did not reach the server")
		}
	}
	_, err := callTool(t, cs, "read_file", nil)
	werr := wantRefused(t, "a third call", err, supervisor.CodeTooManyCalls, "too many concurrent calls", "MaxConcurrentCalls")
	if d := errData(t, werr.Data); d.Limit != "2" || d.Reason != "too many concurrent calls" {
		t.Errorf("error data %s", werr.Data)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "release"}); err != nil {
		t.Fatalf("release: %v", err)
	}
	wg.Wait()
	close(results)
	for res := range results {
		if res != "released" {
			t.Errorf("a call within the cap answered %q", res)
		}
	}
	if got := serverCount(t, cs, "tools/call"); got != "2" {
		t.Errorf("the server got %s tools/call before count, want 2: the refused one reached it", got)
	}
	cs.Close()
	r.end()
}

// In a batch the call over the cap is refused and the others relayed, each
// answered once; a slot comes back when the host cancels its call, and
// when its call times out.
func TestMaxConcurrentCallsOneAnswerEach(t *testing.T) {
	pol := testPolicy(rulesServer(t))
	pol.MaxConcurrentCalls = 2
	pol.CallTimeout = time.Hour
	r := startRelay(t, pol)
	h := r.rawHost()
	h.initialize("2025-03-26")
	wait := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"wait","arguments":{},"_meta":{"progressToken":"p` + id + `"}}}`
	}
	atServer := func(id string) {
		h.next("progress of call "+id, func(m map[string]json.RawMessage) bool {
			return string(m["method"]) == `"notifications/progress"` && strings.Contains(string(m["params"]), `"p`+id+`"`)
		})
	}
	h.send(`[` + wait("1") + `,` + wait("2") + `,` + wait("3") + `]`)
	if resp := h.response("3"); errorCode(resp) != supervisor.CodeTooManyCalls {
		t.Errorf("third call answered %v", resp)
	}
	atServer("1")
	atServer("2")
	if resp := h.call("4", "prompts/get", `{"name":"release"}`); resp["result"] == nil {
		t.Fatalf("release: %s", resp["error"])
	}
	for _, id := range []string{"1", "2"} {
		if resp := h.response(id); !strings.Contains(string(resp["result"]), "released") {
			t.Errorf("call %s answered %v", id, resp)
		}
	}
	h.send(wait("5"))
	h.send(wait("6"))
	atServer("5")
	atServer("6")
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`)
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":6}}`)
	if resp := h.call("7", "tools/call", `{"name":"read_file","arguments":{}}`); resp["result"] == nil {
		t.Errorf("a call after two were cancelled: %s", resp["error"])
	}
	r.end()
	h.checkOneAnswerEach() // the Go SDK server answers cancelled calls too
}

// A call answered by --call-timeout gives its slot back.
func TestMaxConcurrentCallsAfterTimeout(t *testing.T) {
	pol := testPolicy(rulesServer(t))
	pol.MaxConcurrentCalls = 1
	// The wait runs into it; read_file must be answered within it, on a
	// machine the race suite keeps busy (200 ms was once too little).
	pol.CallTimeout = testenv.Wait(time.Second)
	r := startRelay(t, pol)
	cs := r.sdkClient("2025-11-25", nil)
	_, err := callTool(t, cs, "wait", nil)
	wantRefused(t, "wait", err, supervisor.CodeCallTimeout)
	mustCallTool(t, cs, "read_file", nil)
	cs.Close()
	r.end()
}
