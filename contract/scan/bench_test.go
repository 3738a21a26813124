package scan

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/contract"
)

// BenchmarkContract118 scans a contract of 118 tools (the GitLab server's
// size), each as long as sequential-thinking's, whose description is the
// longest of the reference servers': the scanner's share of a first
// tools/list under pins.
func BenchmarkContract118(b *testing.B) {
	page, err := os.ReadFile(filepath.Join("testdata", "server-sequential-thinking-2026.8.31.tools.json"))
	if err != nil {
		b.Fatal(err)
	}
	var res struct{ Tools []map[string]any }
	if err := json.Unmarshal(page, &res); err != nil || len(res.Tools) != 1 {
		b.Fatalf("testdata: %v", err)
	}
	var tools []map[string]any
	for i := range 118 {
		t := map[string]any{}
		for k, v := range res.Tools[0] {
			t[k] = v
		}
		t["name"] = fmt.Sprintf("tool_%d", i)
		tools = append(tools, t)
	}
	big, _ := json.Marshal(map[string]any{"tools": tools})
	items, err := contract.FromList("tools/list", big)
	if err != nil {
		b.Fatal(err)
	}
	ctx := Context{AllowHosts: []string{"api.github.com"}, Others: map[string][]string{"other": {"read_file", "send_email"}}}
	b.SetBytes(int64(len(big)))
	b.ResetTimer()
	for b.Loop() {
		if got := Contract(items, ctx); len(got) > 0 {
			b.Fatalf("findings: %v", got)
		}
	}
}
