package secrets

import (
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"
)

// The scan of a 1 MiB argument alone; bench/ measures it against relaying
// the call (BenchmarkSecretScan1MiB).
func BenchmarkScan1MiB(b *testing.B) {
	blob := make([]byte, 3<<18)
	rand.Read(blob)
	source := "func (s *server) handle_request(ctx context.Context, req *Request) error { // see docs/run-time.md, v1.2-rc.3\n"
	line := "The quick brown fox jumps over the lazy dog; <tags> & \"quotes\" at 12:00.\n"
	for name, v := range map[string]any{
		"text":   map[string]any{"path": "/tmp/a.txt", "content": strings.Repeat(line, (1<<20)/len(line))},
		"base64": map[string]any{"data": blob},
		// bench/'s BenchmarkSecretScan1MiB's argument
		"source": map[string]any{"text": strings.Repeat(source, (1<<20)/len(source))},
	} {
		raw, _ := json.Marshal(v)
		sc := New()
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if got, err := sc.Scan(raw); err != nil || len(got) != 0 {
					b.Fatal(got, err)
				}
			}
		})
	}
}
