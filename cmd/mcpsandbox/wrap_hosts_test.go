package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/hostconfig"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkPassedEnv are the variables the TypeScript SDK's stdio client passes
// on to a server besides the entry's env (getDefaultEnvironment), as
// Claude Desktop starts it.
var sdkPassedEnv = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}

// wrappedMemoryEntry writes a Claude Desktop configuration whose memory
// server (the pinned reference server, started by node) has an env of its
// own, wraps it, and returns the wrapped entry and the environment a host
// started from home would have.
func wrappedMemoryEntry(t *testing.T) (e hostconfig.Entry, entryEnv map[string]string, hostEnv []string) {
	t.Helper()
	requireConfinement(t)
	installed := testenv.NPMServer(t, "server-memory")
	home, env := frictionHome(t)
	file := filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
	writeTree(t, home, map[string]string{".config/Claude/claude_desktop_config.json": fmt.Sprintf(`{
  "mcpServers": {
    "memory": {
      "command": "node",
      "args": [%q],
      "env": {"WRAPPED_ENTRY_TOKEN": "t0k3n"}
    }
  }
}
`, installed)})
	mcpsandboxBin := filepath.Join(filepath.Dir(home), "bin", "mcpsandbox") // frictionHome's: this test binary as the CLI
	if out, errOut, code := runCLI(t, "wrap", "--command", mcpsandboxBin, file); code != exitOK {
		t.Fatalf("wrap: exit %d\n%s%s", code, out, errOut)
	}
	entries, err := hostconfig.Entries(readFile(t, file))
	if err != nil || len(entries) != 1 || entries[0].Command != mcpsandboxBin {
		t.Fatalf("the wrapped file: %v %+v", err, entries)
	}
	if want := []string{"run", "--env", "WRAPPED_ENTRY_TOKEN", "--", "node", installed}; !slices.Equal(entries[0].Args, want) {
		t.Fatalf("args %q, want %q", entries[0].Args, want)
	}
	return entries[0], map[string]string{"WRAPPED_ENTRY_TOKEN": "t0k3n"}, env
}

// A wrapped Claude Desktop entry works when started as Claude Desktop
// starts it: the TypeScript SDK's stdio client, with only the entry's env
// and the variables that SDK passes. The memory server lists its tools and
// keeps an entity.
func TestWrapEntryRunsUnderTheTypeScriptClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed (scripts/test-setup.sh installs it)")
	}
	e, entryEnv, hostEnv := wrappedMemoryEntry(t)
	plan, err := json.Marshal(map[string]any{"sdk": tsSDKDir(t), "command": e.Command, "args": e.Args, "env": entryEnv})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), testenv.Wait(90*time.Second))
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(testenv.RepoRoot(t), "testdata", "tsclient", "wrapped.mjs"), string(plan))
	cmd.Env = hostEnv
	stderr := testenv.NewLogCapture(t)
	cmd.Stderr = stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("wrapped.mjs: %v\nstderr:\n%s", err, stderr)
	}
	var got struct {
		Tools        []string `json:"tools"`
		CreatedError bool     `json:"createdError"`
		Graph        string   `json:"graph"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("wrapped.mjs printed %q: %v", out, err)
	}
	if !slices.Contains(got.Tools, "create_entities") || !slices.Contains(got.Tools, "read_graph") || got.CreatedError ||
		!strings.Contains(got.Graph, "made through the wrapped entry") {
		t.Errorf("through the wrapped entry: %+v\nstderr:\n%s", got, stderr)
	}
	if !strings.Contains(stderr.String(), "policy=memory") {
		t.Errorf("the launch line did not select the memory built-in; stderr:\n%s", stderr)
	}
}

// The same entry works under the Go SDK's CommandTransport, given the
// same environment.
func TestWrapEntryRunsUnderTheGoSDKCommandTransport(t *testing.T) {
	e, entryEnv, hostEnv := wrappedMemoryEntry(t)
	cs, stderr := startLikeAHost(t, e, entryEnv, hostEnv)
	ctx, cancel := context.WithTimeout(t.Context(), testenv.Wait(90*time.Second))
	defer cancel()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v\nstderr:\n%s", err, stderr)
	}
	if !slices.ContainsFunc(tools.Tools, func(tool *mcp.Tool) bool { return tool.Name == "read_graph" }) {
		t.Errorf("tools: %d, no read_graph", len(tools.Tools))
	}
	entity := map[string]any{"name": "wrapped-go", "entityType": "test", "observations": []string{"made through the Go transport"}}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_entities", Arguments: map[string]any{"entities": []any{entity}}}); err != nil || res.IsError {
		t.Fatalf("create_entities: %v %+v\nstderr:\n%s", err, res, stderr)
	}
	if text := readGraph(t, ctx, cs); !strings.Contains(text, "made through the Go transport") {
		t.Errorf("read_graph: %q\nstderr:\n%s", text, stderr)
	}
}

// An npx entry is prepared as part of wrapping, with a progress line, and
// then starts offline (the memory built-in has no network) as the host
// starts it.
func TestWrapPreparesAnNpxServerToStartOffline(t *testing.T) {
	frictionCase(t)
	home, env := frictionHome(t)
	writeTree(t, home, map[string]string{".cursor/mcp.json": fmt.Sprintf(`{"mcpServers": {"memory": {"command": "npx", "args": ["-y", %q]}}}`, memoryPkg)})
	bin := filepath.Join(filepath.Dir(home), "bin", "mcpsandbox")
	file := filepath.Join(home, ".cursor", "mcp.json")
	cmd := exec.Command(self(t), asCLI, "wrap", "--command", bin, file)
	cmd.Dir, cmd.Env = home, env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("wrap: %v\n%s%s", err, out, stderr.String())
	}
	wantIn(t, "wrap's progress", stderr.String(), "mcpsandbox wrap: preparing memory (npx -y "+memoryPkg+") ...", "mcpsandbox wrap: prepared memory")
	e := entriesOf(t, readFile(t, file))["memory"]
	if want := []string{"run", "--", "npx", "-y", memoryPkg}; !slices.Equal(e.Args, want) {
		t.Fatalf("args %q, want %q", e.Args, want)
	}
	cs, logs := startLikeAHost(t, e, nil, env)
	ctx, cancel := context.WithTimeout(t.Context(), testenv.Wait(90*time.Second))
	defer cancel()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list: %v\nstderr:\n%s", err, logs)
	}
	readGraph(t, ctx, cs)
}

// startLikeAHost starts the entry with the Go SDK's CommandTransport and
// only its env and the variables the TypeScript SDK passes.
func startLikeAHost(t *testing.T, e hostconfig.Entry, entryEnv map[string]string, hostEnv []string) (*mcp.ClientSession, *testenv.LogCapture) {
	t.Helper()
	cmd := exec.Command(e.Command, e.Args...)
	for _, kv := range hostEnv {
		if name, _, _ := strings.Cut(kv, "="); slices.Contains(sdkPassedEnv, name) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for name, v := range entryEnv {
		cmd.Env = append(cmd.Env, name+"="+v)
	}
	stderr := testenv.NewLogCapture(t)
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(t.Context(), testenv.Wait(90*time.Second))
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "go-host", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, stderr)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, stderr
}

func readGraph(t *testing.T, ctx context.Context, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_graph", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("read_graph: %v %+v", err, res)
	}
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	return text
}
