//go:build linux

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// instanceID tells one server process from the next, so that a test can see
// a restart from the host side.
var instanceID = func() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}()

type echoArgs struct {
	Text string `json:"text"`
}

type noArgs struct{}

func addTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "escape", Description: "try every sandbox escape; report which were blocked"},
		func(ctx context.Context, _ *mcp.CallToolRequest, a Args) (*mcp.CallToolResult, any, error) {
			return textResult(runProbes(&a)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "return the text"},
		func(ctx context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "instance", Description: "an id unique to this server process"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: instanceID}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "limits", Description: "the cgroup limits, seccomp mode and uid as seen from inside"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
			return textResult(limits()), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "membomb", Description: "allocate and touch memory until killed"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
			return nil, nil, memBomb()
		})
	mcp.AddTool(s, &mcp.Tool{Name: "forkbomb", Description: "start processes until fork fails, then exit 1"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
			return nil, nil, forkBomb()
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fill_tmp", Description: "write /tmp until ENOSPC, then exit 3"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
			return nil, nil, fillTmp()
		})
}

func textResult(v any) *mcp.CallToolResult {
	b, err := json.Marshal(v)
	if err != nil {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
}
