package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/testnet"
	"github.com/mcpsandbox/mcpsandbox/internal/testnet/netclient"
)

// The egress benchmark (issue 16): connect latency, bulk throughput and
// the supervisor's memory per 100 open connections, each through the
// capture path (egress) beside a direct connection from an unconfined
// process to the same test host (direct), in one run. The same mcpnet
// binary measures in both, so only the path differs.

// egressSessions starts the test network and mcpnet twice: unconfined in
// the client namespace, and under mcpsandbox run --allow-host.
func egressSessions(b *testing.B) (direct, egress *testnet.Session) {
	b.Helper()
	var out, errOut strings.Builder
	cli([]string{"run", "--help"}, stdio{In: strings.NewReader(""), Out: &out, Err: &errOut})
	if !strings.Contains(out.String()+errOut.String(), "--allow-host") {
		b.Skip("egress pipeline not on this branch yet (run --help names no --allow-host)")
	}
	e := testnet.Start(b, testnet.Options{})
	kit := testnet.BuildKit(b, e.CA.Path)
	server := testnet.ServerCommand(kit)
	direct = e.Open(b, exec.Command(server[0], server[1:]...), e.StartDirect)
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	argv := append([]string{asCLI, "run", "--ro", kit.Dir, "--ro", e.Dir}, egressFlags(e)...)
	argv = append(append(argv, "--"), server...)
	egress = e.Open(b, exec.Command(self, argv...), e.Start)
	return direct, egress
}

var benchURL = "http://" + testnet.APIName + "/"

func BenchmarkEgressConnect(b *testing.B) {
	direct, egress := egressSessions(b)
	for _, p := range []struct {
		name string
		s    *testnet.Session
	}{{"direct", direct}, {"egress", egress}} {
		b.Run(p.name, func(b *testing.B) {
			m := p.s.Measure(b, netclient.MeasureArgs{URL: benchURL, Connects: b.N})
			b.ReportMetric(float64(m.MedianConnect().Nanoseconds()), "median-ns/connect")
		})
	}
}

func BenchmarkEgressBulk256MiB(b *testing.B) {
	direct, egress := egressSessions(b)
	for _, p := range []struct {
		name string
		s    *testnet.Session
	}{{"direct", direct}, {"egress", egress}} {
		b.Run(p.name, func(b *testing.B) {
			b.SetBytes(256 << 20)
			for b.Loop() {
				p.s.Measure(b, netclient.MeasureArgs{URL: benchURL, Bytes: 256 << 20})
			}
		})
	}
}

// BenchmarkEgressMemoryPer100Conns: the growth of mcpsandbox's resident
// memory while the server holds 100 more connections open.
func BenchmarkEgressMemoryPer100Conns(b *testing.B) {
	_, egress := egressSessions(b)
	pid := egress.Cmd.Process.Pid
	var grew int64
	for b.Loop() {
		before := rssKiB(b, pid)
		if n := egress.Hold(b, benchURL, 100); n != 100 {
			b.Fatalf("holding %d connections, want 100", n)
		}
		grew += rssKiB(b, pid) - before
		egress.Release(b)
	}
	b.ReportMetric(float64(grew)/float64(b.N), "KiB/100conns")
}

// rssKiB is pid's resident set size.
func rssKiB(b *testing.B, pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var kib int64
		if _, err := fmt.Sscanf(sc.Text(), "VmRSS: %d kB", &kib); err == nil {
			return kib
		}
	}
	b.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}
