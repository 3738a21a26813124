package supervisor_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// roleListServer is a Go SDK server whose tool list changes: "add" adds a
// tool (the SDK then tells each subscriptions/listen stream), "crash"
// exits with status 5.
const roleListServer = "mcpsandbox-test-role=list-server"

func serveList() {
	s := mcp.NewServer(&mcp.Implementation{Name: "lists", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "add"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Name string `json:"name"`
	}) (*mcp.CallToolResult, any, error) {
		mcp.AddTool(s, &mcp.Tool{Name: in.Name}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "added " + in.Name}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "crash"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		os.Exit(5)
		return nil, nil, nil
	})
	s.Run(context.Background(), &mcp.StdioTransport{})
}

// The Go SDK client as it is by default (2026-07-28: server/discover, then
// a subscriptions/listen stream for the tool list) keeps its stream through
// a crash: the relay re-sends the listen to the new process under its id,
// swallows the second acknowledgement, and the new process's list changes
// reach the client on the stream it opened. Every other request is
// answered once, the stream not at all (until the client closes it).
func TestListenStreamSurvivesCrash(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r := startRelay(t, testPolicy([]string{exe, roleListServer}))
	sent, got := &wireLog{}, &wireLog{}
	changed := make(chan struct{}, 8)
	c := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1.0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: teeReader{r.fromRly, got}, Writer: teeWriter{r.toRelay, sent}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s, want the stateless 2026-07-28", v)
	}
	isAck := func(l []byte) bool { return methodOf(l) == "notifications/subscriptions/acknowledged" }
	got.waitFor(t, isAck, 1)
	waitChanged := func(what string) {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(waitLimit):
			t.Fatalf("no tools/list_changed reached the client %s", what)
		}
	}
	mustCallTool(t, cs, "add", map[string]any{"name": "first"})
	waitChanged("before the crash")

	_, err = callTool(t, cs, "crash", nil)
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != supervisor.CodeServerCrashed {
		t.Fatalf("crash call: %v", err)
	}
	r.waitEvent(supervisor.EventReady)
	// The new process has the stream once it acknowledged it (swallowed):
	// its change notification then goes to the client's stream.
	r.logs.waitFor(t, "acknowledged the host's subscriptions/listen stream again")
	mustCallTool(t, cs, "add", map[string]any{"name": "second"})
	waitChanged("after the crash, on the stream opened before it")
	cs.Close()
	r.end()

	var listen string
	requests := map[string]string{}
	for _, l := range sent.lines {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(l, &m) == nil && m.ID != nil && m.Method != "" {
			requests[string(m.ID)] = m.Method
			if m.Method == "subscriptions/listen" {
				listen = string(m.ID)
			}
		}
	}
	if listen == "" {
		t.Fatal("the client opened no subscriptions/listen stream")
	}
	answers := map[string]int{}
	acks := 0
	for _, l := range got.lines {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(l, &m)
		if m.Method == "" && m.ID != nil {
			answers[string(m.ID)]++
		}
		if isAck(l) {
			acks++
		}
	}
	if acks != 1 {
		t.Errorf("the client got %d acknowledgements of its stream, want 1", acks)
	}
	for id, method := range requests {
		want := 1
		if id == listen {
			want = 0 // open until the client closed it
		}
		if answers[id] != want {
			t.Errorf("%s (id %s): %d answers, want %d", method, id, answers[id], want)
		}
	}
}

func methodOf(line []byte) string {
	var m struct {
		Method string `json:"method"`
	}
	json.Unmarshal(line, &m)
	return m.Method
}
