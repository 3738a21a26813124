package contract

import (
	"fmt"
	"testing"
)

// BenchmarkFromList118 canonicalises and hashes a tools/list of 118 tools
// (the GitLab server's size), made of the filesystem server's real tools
// under other names: what a pin check adds to a first list.
func BenchmarkFromList118(b *testing.B) {
	res := fixture(&testing.T{}, "filesystem-tools-list")
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
	page := encode(&testing.T{}, res)
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := FromList("tools/list", page); err != nil {
			b.Fatal(err)
		}
	}
}
