package supervisor_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// roleRulesServer is a Go SDK server made to watch the MCP rules at work:
// it pages every list two items at a time, counts the requests it receives
// by method (tool "count" says how many of its method came before it, its
// own call left out), holds "wait" calls
// until a prompts/get of "release" (which no tools/call budget counts),
// and sends an update for res://secret/1 before each one for res://open/1.
const roleRulesServer = "mcpsandbox-test-role=rules-server"

func serveRules() {
	var mu sync.Mutex
	got := map[string]int{}
	gate := make(chan struct{})
	s := mcp.NewServer(&mcp.Implementation{Name: "rules", Version: "1"}, &mcp.ServerOptions{
		PageSize:           2,
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	mcp.AddTool(s, &mcp.Tool{Name: "count"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Method string `json:"method"`
	}) (*mcp.CallToolResult, any, error) {
		mu.Lock()
		defer mu.Unlock()
		n := got[in.Method]
		if in.Method == "tools/call" {
			n--
		}
		return text(fmt.Sprint(n)), nil, nil
	})
	for _, name := range []string{"write_file", "read_file"} {
		mcp.AddTool(s, &mcp.Tool{Name: name}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return text(name), nil, nil
		})
	}
	mcp.AddTool(s, &mcp.Tool{Name: "wait"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		mu.Lock()
		g := gate
		mu.Unlock()
		if tok := req.Params.GetProgressToken(); tok != nil {
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 0, Message: "waiting"})
		}
		select {
		case <-g:
			return text("released"), nil, nil
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "touch"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return text("touched"), nil, s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "res://open/1"})
	})
	prompt := func(name string) {
		s.AddPrompt(&mcp.Prompt{Name: name}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			if name == "release" {
				mu.Lock()
				close(gate)
				gate = make(chan struct{})
				mu.Unlock()
			}
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: name}}}}, nil
		})
	}
	for _, name := range []string{"open-1", "secret-1", "secret-2", "open-2", "release"} {
		prompt(name)
	}
	for _, uri := range []string{"res://secret/1", "res://open/1", "res://secret/deep/2", "res://secret/3", "res://open/2"} {
		s.AddResource(&mcp.Resource{URI: uri, Name: uri}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: uri}}}, nil
		})
	}
	for _, tmpl := range []string{"res://secret/{id}", "res://open/{id}", "res://secret/x/{id}"} {
		s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: tmpl, Name: tmpl}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: tmpl}}}, nil
		})
	}
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			mu.Lock()
			got[method]++
			mu.Unlock()
			return next(ctx, method, req)
		}
	})
	s.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if up, ok := req.(*mcp.ServerRequest[*mcp.ResourceUpdatedNotificationParams]); ok && up.Params.URI == "res://open/1" {
				secret := *up.Params
				secret.URI = "res://secret/1"
				if _, err := next(ctx, method, &mcp.ServerRequest[*mcp.ResourceUpdatedNotificationParams]{Session: up.Session, Params: &secret}); err != nil {
					return nil, err
				}
			}
			return next(ctx, method, req)
		}
	})
	s.Run(context.Background(), &mcp.StdioTransport{})
}
