package bench

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"
	"time"
)

const initializeLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n"

// spawnToInitialize starts argv, sends initialize and returns the time until
// the result line arrives. The process is torn down outside the measurement.
func spawnToInitialize(b testing.TB, argv []string) time.Duration {
	cmd := exec.Command(argv[0], argv[1:]...)
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	in.Write([]byte(initializeLine))
	line, err := bufio.NewReader(out).ReadString('\n')
	elapsed := time.Since(start)
	in.Close()
	cmd.Wait()
	if err != nil || !strings.Contains(line, `"protocolVersion"`) {
		b.Fatalf("%v: no initialize result (%v): %q", argv, err, line)
	}
	return elapsed
}

// BenchmarkSpawnInitialize: spawn → initialize result of a static Go MCP
// server, direct, through `mcpsandbox run` (confined: namespaces, seccomp,
// cgroups) and under bubblewrap. Target: mcpsandbox ≤ 1.0× bwrap.
func BenchmarkSpawnInitialize(b *testing.B) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		b.Fatal("bubblewrap is needed as the baseline: apt-get install -y bubblewrap")
	}
	server := bins.staticserver
	chains := []chain{
		{"direct", []string{server}},
		{"mcpsandbox", []string{bins.mcpsandbox, "run", "--log-level", "warn", "--", server}},
		// The flags, plus a read-only bind of the server binary
		// itself, which lives outside /usr.
		{"bwrap", []string{bwrap, "--unshare-all", "--uid", "65534", "--gid", "65534",
			"--ro-bind", "/usr", "/usr", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
			"--ro-bind", server, server, server}},
	}
	for _, c := range chains {
		spawnToInitialize(b, c.argv) // warm the page cache
	}
	got := samples{}
	b.ResetTimer()
	for range b.N {
		for _, c := range chains {
			got[c.name] = append(got[c.name], spawnToInitialize(b, c.argv))
		}
	}
	b.StopTimer()
	got.report(b, "ms")
}
