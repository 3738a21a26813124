package scan

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/contract"
)

// BenchmarkContract118 scans the page contract's BenchmarkFromList118
// canonicalises: 118 tools (the GitLab server's size) cycled from the
// filesystem reference server's tools/list, so the two read as a ratio.
func BenchmarkContract118(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "filesystem-tools-list.json"))
	if err != nil {
		b.Fatal(err)
	}
	var res map[string]any
	if err := json.Unmarshal(data, &res); err != nil {
		b.Fatal(err)
	}
	tools := res["tools"].([]any)
	var many []any
	for i := 0; len(many) < 118; i++ {
		for _, v := range tools {
			m := map[string]any{}
			for k, x := range v.(map[string]any) {
				m[k] = x
			}
			m["name"] = fmt.Sprintf("%s_%d", m["name"], i)
			many = append(many, m)
		}
	}
	res["tools"] = many[:118]
	page, err := json.Marshal(res)
	if err != nil {
		b.Fatal(err)
	}
	items, err := contract.FromList("tools/list", page)
	if err != nil {
		b.Fatal(err)
	}
	ctx := Context{AllowHosts: []string{"api.github.com"}, Others: map[string][]string{"other": {"send_email", "read_graph"}}}
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		if got := Contract(items, ctx); len(got) > 0 {
			b.Fatalf("findings: %v", got)
		}
	}
}
