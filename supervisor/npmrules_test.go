package supervisor_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// Prompt and resource rules in front of the TypeScript reference server.
func TestPromptAndResourceRulesServerEverything(t *testing.T) {
	pol := npmPolicy(t, "server-everything", "stdio")
	pol.AllowPrompts = []string{"*-prompt"}
	pol.DenyPrompts = []string{"args-*"}
	pol.DenyResources = []string{"demo://*/features.md", "demo://resource/dynamic/blob/*"}
	r := startRelay(t, pol)
	cs := r.sdkClient("", nil)
	ctx := context.Background()

	if got := allPrompts(t, cs); got != "completable-prompt,resource-prompt,simple-prompt" {
		t.Errorf("prompts: %s", got)
	}
	_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "args-prompt", Arguments: map[string]string{"city": "Oslo"}})
	wantRefused(t, "prompts/get args-prompt", err, supervisor.CodePolicyDenied, `prompt "args-prompt" is denied`, "DenyPrompts")
	if res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "simple-prompt"}); err != nil || len(res.Messages) == 0 {
		t.Errorf("prompts/get simple-prompt: %v", err)
	}
	_, err = cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "args-prompt"}, Argument: mcp.CompleteParamsArgument{Name: "city", Value: "O"}})
	wantRefused(t, "completion/complete of args-prompt", err, supervisor.CodePolicyDenied, "DenyPrompts")

	resources := allResources(t, cs)
	if strings.Contains(resources, "features.md") || !strings.Contains(resources, "demo://resource/static/document/architecture.md") {
		t.Errorf("resources: %s", resources)
	}
	if got := allTemplates(t, cs); got != "demo://resource/dynamic/text/{resourceId}" {
		t.Errorf("templates: %s", got)
	}
	for _, uri := range []string{"demo://resource/static/document/features.md", "demo://resource/dynamic/blob/1"} {
		_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		wantRefused(t, "read "+uri, err, supervisor.CodePolicyDenied, "DenyResources")
	}
	err = cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "demo://resource/static/document/features.md"})
	wantRefused(t, "subscribe features.md", err, supervisor.CodePolicyDenied, "DenyResources")
	if res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://resource/dynamic/text/1"}); err != nil || len(res.Contents) == 0 {
		t.Errorf("read of an allowed template: %v", err)
	}
	cs.Close()
	if out := r.end(); out.Failed {
		t.Errorf("outcome %+v", out)
	}
}

// --max-concurrent-calls and --rate-limit in front of server-everything:
// two long-running operations are in flight (each has sent its first
// progress notification), a third call is refused at once, the two
// complete; get-sum's third call in the hour is refused.
func TestCallBudgetServerEverything(t *testing.T) {
	pol := npmPolicy(t, "server-everything", "stdio")
	pol.MaxConcurrentCalls = 2
	pol.RateLimits = []string{"get-sum=2/1h"}
	r := startRelay(t, pol)
	progressed := make(chan any, 64)
	cs := r.sdkClient("", &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			select {
			case progressed <- req.Params.ProgressToken:
			default: // only the first ones are waited for
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	var wg sync.WaitGroup
	done := make(chan string, 2)
	for i := range 2 {
		wg.Go(func() {
			// 40 steps of 50ms: the first progress comes early, the end 2s later.
			p := &mcp.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 2, "steps": 40}}
			p.SetProgressToken(i + 1)
			res, err := cs.CallTool(ctx, p)
			if err != nil {
				done <- err.Error()
				return
			}
			done <- toolText(t, res)
		})
	}
	seen := map[string]bool{}
	for len(seen) < 2 {
		select {
		case tok := <-progressed:
			seen[fmt.Sprint(tok)] = true
		case <-ctx.Done():
			t.Fatal("the long-running calls sent no progress")
		}
	}
	_, err := callTool(t, cs, "echo", map[string]any{"message": "one too many"})
	wantRefused(t, "a third call", err, supervisor.CodeTooManyCalls, "too many concurrent calls")
	wg.Wait()
	close(done)
	for res := range done {
		if !strings.Contains(res, "Long running operation completed") {
			t.Errorf("a call within the cap answered %q", res)
		}
	}
	for range 2 {
		if got := mustCallTool(t, cs, "get-sum", map[string]any{"a": 2, "b": 40}); !strings.Contains(got, "42") {
			t.Errorf("get-sum: %q", got)
		}
	}
	_, err = callTool(t, cs, "get-sum", map[string]any{"a": 2, "b": 40})
	wantRefused(t, "get-sum over its limit", err, supervisor.CodeRateLimited, "rate limited", "2/1h")
	mustCallTool(t, cs, "echo", map[string]any{"message": "echo has no limit"})
	cs.Close()
	r.end()
}
