package supervisor_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The official Go SDK client against the Go SDK example server through the
// relay, for every protocol version the client speaks.
func TestGoSDKThroughRelayEveryProtocolVersion(t *testing.T) {
	for _, version := range []string{"", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"} {
		name := version
		if name == "" {
			name = "default-2026-07-28"
		}
		t.Run(name, func(t *testing.T) {
			r := startRelay(t, testPolicy(exampleCommand(t)))
			cs := r.sdkClient(version, nil)
			want := version
			if want == "" {
				want = "2026-07-28"
			}
			if got := cs.InitializeResult().ProtocolVersion; got != want {
				t.Errorf("negotiated %q, want %q", got, want)
			}
			ctx := context.Background()
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range tools.Tools {
				names = append(names, tool.Name)
			}
			if !strings.Contains(strings.Join(names, ","), "echo") {
				t.Errorf("tools %v lack echo", names)
			}
			if got := mustCallTool(t, cs, "echo", map[string]any{"text": "hello ✓"}); got != "hello ✓" {
				t.Errorf("echo returned %q", got)
			}
			big := mustCallTool(t, cs, "big", map[string]any{"bytes": 1 << 20})
			if len(big) != 1<<20 {
				t.Errorf("big returned %d bytes, want %d", len(big), 1<<20)
			}
			p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada"}})
			if err != nil || !strings.Contains(p.Messages[0].Content.(*mcp.TextContent).Text, "Ada") {
				t.Errorf("prompt: %v %+v", err, p)
			}
			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "example://counter"})
			if err != nil || rr.Contents[0].Text != "0" {
				t.Errorf("resource: %v %+v", err, rr)
			}
			if err := cs.Close(); err != nil {
				t.Logf("close: %v", err)
			}
			if out := r.end(); out.Failed {
				t.Errorf("outcome %+v, want exit 0 after the host closed", out)
			}
		})
	}
}
