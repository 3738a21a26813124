package bench

import (
	"bufio"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
)

// burnerScript keeps two CPUs busy inside the sandbox: two shell loops,
// then a line once both run.
const burnerScript = `spin() { while :; do :; done; }; spin & spin & echo burning; wait`

// BenchmarkHostUnderBusyServer: how long a fixed piece of host work takes
// (hostUnits units of arithmetic on one locked thread of this process, a
// stand-in for the supervisor or any host program) while a sandboxed
// server keeps two threads busy, with the server at the sandbox's default
// CPU weight (DefaultCPUWeight) and at a cgroup's default (100, what it
// had before: the host's own weight), and with no server at all. Each
// round runs all three, interleaved, so that the machine's other load
// falls on all alike. Reported: the medians (idle-ms, weighted-ms,
// unweighted-ms) and x-weighted-vs-unweighted (below 1: the host gets its
// work done sooner beside a weighted server), x-weighted-vs-idle.
//
// The burner runs only confined, under memory and pids limits, inside an
// outer limit this process sets first; nothing caps its CPU, which is the
// point.
func BenchmarkHostUnderBusyServer(b *testing.B) {
	testenv.OuterLimit(b, 1<<30, 256)
	unit := calibrateUnit(200 * time.Microsecond)
	got := samples{}
	b.ResetTimer()
	for range b.N {
		got["idle"] = append(got["idle"], hostWork(unit))
		for _, w := range []struct {
			name   string
			weight uint64
		}{{"weighted", sandbox.DefaultCPUWeight}, {"unweighted", 100}} {
			stop := startBurner(b, w.weight)
			got[w.name] = append(got[w.name], hostWork(unit))
			stop()
		}
	}
	b.StopTimer()
	for _, name := range []string{"idle", "weighted", "unweighted"} {
		b.ReportMetric(float64(got.median(name))/1e6, name+"-ms")
	}
	b.ReportMetric(float64(got.median("weighted"))/float64(got.median("unweighted")), "x-weighted-vs-unweighted")
	b.ReportMetric(float64(got.median("weighted"))/float64(got.median("idle")), "x-weighted-vs-idle")
}

// hostUnits units make up one piece of host work (about 50 ms of CPU).
const hostUnits = 250

var sink uint64

// spin is one unit of host work: n rounds of arithmetic.
func spin(n int) {
	x := sink | 1
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	sink = x
}

// calibrateUnit finds the rounds spin needs for about d, taking the
// fastest of a few tries (the one least disturbed).
func calibrateUnit(d time.Duration) int {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const n = 1 << 20
	var best time.Duration
	for range 20 {
		start := time.Now()
		spin(n)
		if t := time.Since(start); best == 0 || t < best {
			best = t
		}
	}
	return max(int(float64(n)*float64(d)/float64(best)), 1)
}

// hostWork times hostUnits units on one OS thread.
func hostWork(unit int) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := time.Now()
	for range hostUnits {
		spin(unit)
	}
	return time.Since(start)
}

// startBurner starts the two busy loops in a sandbox of the given CPU
// weight and returns once both run; stop kills the sandbox.
func startBurner(b *testing.B, weight uint64) (stop func()) {
	b.Helper()
	p, err := sandbox.Start(sandbox.Spec{
		Name: "burner", Args: []string{"/bin/sh", "-c", burnerScript},
		TmpSize: 1 << 20, NoFile: 64, Seccomp: "default", Memory: 64 << 20, Pids: 16,
		CPUWeight: weight,
	}, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	go io.Copy(io.Discard, p.Stderr())
	line, err := bufio.NewReader(p.Stdout()).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "burning" {
		p.Close()
		b.Fatalf("burner: %q, %v (%v)", line, err, p.Exit())
	}
	return func() { p.Close() }
}
