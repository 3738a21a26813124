package scan

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/contract"
)

// BenchmarkContract118 scans 118 tools (the GitLab server's size), the
// filesystem reference server's cycled, as contract's BenchmarkFromList118
// canonicalises them, so the two read as a ratio (bytes: the canonical
// texts scanned).
func BenchmarkContract118(b *testing.B) {
	page, err := os.ReadFile(filepath.Join("..", "testdata", "filesystem-tools-list.json"))
	if err != nil {
		b.Fatal(err)
	}
	listed, err := contract.FromList("tools/list", page)
	if err != nil {
		b.Fatal(err)
	}
	items := make([]contract.Item, 118)
	var size int64
	for i := range items {
		items[i] = listed[i%len(listed)]
		size += int64(len(items[i].Text))
	}
	ctx := Context{AllowHosts: []string{"api.github.com"}, Others: map[string][]string{"other": {"send_email", "read_graph"}}}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if got := Contract(items, ctx); len(got) > 0 {
			b.Fatalf("findings: %v", got)
		}
	}
}
