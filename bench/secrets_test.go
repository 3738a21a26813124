package bench

import (
	"strings"
	"testing"
)

// BenchmarkSecretScan1MiB: a tools/call echo of a 1 MiB argument (text
// like a source file, rich in the '_', '-' and '.' the quick look stops
// at, no secret) through mcpsandbox with the secret scan (the default)
// and with --no-secret-scan, in one run. Target: ≤ 1.10×.
func BenchmarkSecretScan1MiB(b *testing.B) {
	line := "func (s *server) handle_request(ctx context.Context, req *Request) error { // see docs/run-time.md, v1.2-rc.3\n"
	text := strings.Repeat(line, (1<<20)/len(line))
	run := func(flags ...string) []string {
		argv := append([]string{bins.mcpsandbox, "run", "--log-level", "warn", "--max-message", "32MiB"}, flags...)
		return append(argv, "--", bins.staticserver)
	}
	pair{on: "scan", off: "noscan", warmup: 3}.run(b, startSession(b, run()), startSession(b, run("--no-secret-scan")),
		func(s *session) { s.call(b, "echo", map[string]any{"text": text}) })
}

// BenchmarkApprovalTierEcho1KiB: a 1 KiB tools/call echo through mcpsandbox
// under an approval tier that does not match the tool, and with none, in
// one run. Target: ≤ 1.02×: a call no tier names costs nothing extra.
func BenchmarkApprovalTierEcho1KiB(b *testing.B) {
	text := strings.Repeat("x", 1024)
	run := func(flags ...string) []string {
		argv := append([]string{bins.mcpsandbox, "run", "--log-level", "warn"}, flags...)
		return append(argv, "--", bins.staticserver)
	}
	pair{on: "tier", off: "notier", warmup: 20}.run(b, startSession(b, run("--approve-tool", "deploy_*")), startSession(b, run()),
		func(s *session) { s.call(b, "echo", map[string]any{"text": text}) })
}
