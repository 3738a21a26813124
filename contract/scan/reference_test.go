package scan

import (
	"context"
	"encoding/json"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/contract"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// The reference servers' contracts, as the Go SDK client lists them from
// the pinned npm packages (each run in a network namespace of its own),
// and sequential-thinking's tools/list as its 2026.8.31 release served it
// (testdata: the package is not among testdata/npm's), give no finding,
// scanned as neighbours in one config.
func TestScannerFindsNothingInTheReferenceServers(t *testing.T) {
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("unshare (util-linux) is not installed")
	}
	if os.Geteuid() != 0 {
		t.Skip("the servers run in network namespaces of their own, which needs root here")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	contracts := map[string][]contract.Item{
		"filesystem": listContract(t, unshare, node, testenv.NPMServer(t, "server-filesystem"), t.TempDir()),
		"memory":     listContract(t, unshare, node, testenv.NPMServer(t, "server-memory")),
		"everything": listContract(t, unshare, node, testenv.NPMServer(t, "server-everything"), "stdio"),
	}
	page, err := os.ReadFile(filepath.Join("testdata", "server-sequential-thinking-2026.8.31.tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	if contracts["sequential-thinking"], err = contract.FromList("tools/list", page); err != nil {
		t.Fatal(err)
	}
	tools := map[string][]string{}
	for server, items := range contracts {
		for _, it := range items {
			if it.Kind == contract.Tool {
				tools[server] = append(tools[server], it.Key)
			}
		}
	}
	for server, items := range contracts {
		if len(tools[server]) == 0 {
			t.Fatalf("%s listed no tools", server)
		}
		ctx := Context{Server: server, OwnTools: tools[server], Others: map[string][]string{}}
		for other, names := range tools {
			if other != server {
				ctx.Others[other] = names
			}
		}
		for _, it := range items {
			if got := Item(it, ctx); len(got) > 0 {
				t.Errorf("%s %s:\n%s", server, it.Name(), lines(got))
			}
		}
		t.Logf("%s: %d items, no finding", server, len(items))
	}
}

// listContract starts a reference server with no network and lists its
// whole contract through the Go SDK client.
func listContract(t *testing.T, unshare, node, entry string, args ...string) []contract.Item {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Wait(60*time.Second))
	defer cancel()
	cmd := exec.Command(unshare, append([]string{"--net", "--pid", "--fork", "--kill-child", "--", node, entry}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "MEMORY_FILE_PATH=" + filepath.Join(t.TempDir(), "memory.jsonl")}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "scan-test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("%s: %v", entry, err)
	}
	defer cs.Close()
	init, err := json.Marshal(cs.InitializeResult())
	if err != nil {
		t.Fatal(err)
	}
	items, err := contract.FromInitialize(init)
	if err != nil {
		t.Fatal(err)
	}
	caps := cs.InitializeResult().Capabilities
	add := func(method, member string, list []any) {
		page, err := json.Marshal(map[string]any{member: list})
		if err != nil {
			t.Fatal(err)
		}
		got, err := contract.FromList(method, page)
		if err != nil {
			t.Fatalf("%s %s: %v", entry, method, err)
		}
		items = append(items, got...)
	}
	if caps.Tools != nil {
		add("tools/list", "tools", collect(t, cs.Tools(ctx, nil)))
	}
	if caps.Prompts != nil {
		add("prompts/list", "prompts", collect(t, cs.Prompts(ctx, nil)))
	}
	if caps.Resources != nil {
		add("resources/list", "resources", collect(t, cs.Resources(ctx, nil)))
		add("resources/templates/list", "resourceTemplates", collect(t, cs.ResourceTemplates(ctx, nil)))
	}
	return items
}

func collect[T any](t *testing.T, seq iter.Seq2[T, error]) []any {
	t.Helper()
	var out []any
	for v, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}
