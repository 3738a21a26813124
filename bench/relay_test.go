package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkEcho1KiB: round trip of a 1 KiB tools/call echo through each
// chain. Target: mcpsandbox ≤ 1.10× minrelay.
func BenchmarkEcho1KiB(b *testing.B) {
	text := strings.Repeat("x", 1024)
	benchToolCall(b, "echo", map[string]any{"text": text}, 20, "µs")
}

// BenchmarkResult16MiB: a tools/call whose result carries 16 MiB of text.
// Target: mcpsandbox ≤ 1.10× minrelay.
func BenchmarkResult16MiB(b *testing.B) {
	benchToolCall(b, "big", map[string]any{"bytes": 16 << 20}, 1, "ms")
}

func benchToolCall(b *testing.B, tool string, args map[string]any, warmup int, unit string) {
	chains := relayChains()
	sessions := make([]*session, len(chains))
	for i, c := range chains {
		sessions[i] = startSession(b, c.argv)
		for range warmup {
			sessions[i].call(b, tool, args)
		}
	}
	got := samples{}
	b.ResetTimer()
	for range b.N {
		for i, c := range chains {
			start := time.Now()
			sessions[i].call(b, tool, args)
			got[c.name] = append(got[c.name], time.Since(start))
		}
	}
	b.StopTimer()
	got.report(b, unit)
	rss, peak := rssMiB(b, sessions[len(chains)-1].cmd.Process.Pid)
	b.ReportMetric(rss, "mcpsandbox-RSS-MiB")
	b.ReportMetric(peak, "mcpsandbox-peakRSS-MiB")
}

// BenchmarkCrashRecovery: from the error answering a call the server crashed
// in, to the next call succeeding on the restarted server; reported beside
// the server's own spawn→initialize time measured in the same run. Each
// iteration is a fresh session, so every crash is a first crash (later
// crashes in a row back off on purpose). Target: recovery ≤ 250 ms + server
// start.
func BenchmarkCrashRecovery(b *testing.B) {
	got := samples{}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		s := startSession(b, []string{bins.mcpsandbox, "run", "--log-level", "error", "--", bins.staticserver})
		s.call(b, "echo", map[string]any{"text": "warm"})
		b.StartTimer()
		got["start"] = append(got["start"], spawnToInitialize(b, []string{bins.staticserver}))
		_, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "crash", Arguments: map[string]any{"code": 3}})
		if err == nil {
			b.Fatal("crash call returned a result; want the relay's crash error")
		}
		start := time.Now()
		s.call(b, "echo", map[string]any{"text": "after"})
		got["recovery"] = append(got["recovery"], time.Since(start))
		b.StopTimer()
		s.close()
		b.StartTimer()
	}
	b.StopTimer()
	recovery, serverStart := got.median("recovery"), got.median("start")
	b.ReportMetric(float64(recovery)/1e6, "recovery-ms")
	b.ReportMetric(float64(serverStart)/1e6, "server-start-ms")
	b.ReportMetric(float64(recovery-serverStart)/1e6, "overhead-ms")
}
