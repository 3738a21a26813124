package diagnose

import (
	"encoding/json"
	"strings"
	"testing"
)

// What every tools/call result costs the relay under its lock: the scan
// for text that could pass for mcpsandbox's, on 64 KiB of prose, ASCII
// and not.
func BenchmarkMayPassForHint(b *testing.B) {
	for _, c := range []struct{ name, line string }{
		{"ascii", "The quick brown fox jumps over the lazy dog; mcp servers relay maps.\n"},
		{"utf8", "Быстрая бурая лиса — über den faulen Hund ✓ 速い茶色の狐。\n"},
	} {
		result, _ := json.Marshal(map[string]any{"content": []any{map[string]string{"type": "text", "text": strings.Repeat(c.line, 64<<10/len(c.line))}}})
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(result)))
			for b.Loop() {
				if MayPassForHint(result) {
					b.Fatal("flagged")
				}
			}
		})
	}
}
