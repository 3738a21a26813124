package bench

import (
	"bufio"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

const initializeLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n"

// spawnToInitialize starts argv, sends initialize and returns the time until
// the result line arrives. The process is torn down outside the measurement.
func spawnToInitialize(b testing.TB, argv []string) time.Duration {
	return spawnToLine(b, argv, initializeLine, `"protocolVersion"`)
}

// spawnToLine starts argv, writes input and returns the time until a first
// output line containing want arrives.
func spawnToLine(b testing.TB, argv []string, input, want string) time.Duration {
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
	in.Write([]byte(input))
	line, err := bufio.NewReader(out).ReadString('\n')
	elapsed := time.Since(start)
	in.Close()
	cmd.Wait()
	if err != nil || !strings.Contains(line, want) {
		b.Fatalf("%v: no line with %s (%v): %q", argv, want, err, line)
	}
	return elapsed
}

// spawnToMain starts argv and returns the time until its first write to
// standard error: for a program that writes there as soon as main runs, its
// exec → main (runtime start, package initialisation, dynamic loading).
func spawnToMain(b testing.TB, argv []string) time.Duration {
	cmd := exec.Command(argv[0], argv[1:]...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	var first [1]byte
	n, err := stderr.Read(first[:])
	elapsed := time.Since(start)
	io.Copy(io.Discard, stderr)
	cmd.Wait()
	if n == 0 {
		b.Fatalf("%v: wrote nothing to stderr (%v)", argv, err)
	}
	return elapsed
}

// bwrapArgv is the baseline sandbox: the flags, plus a read-only
// bind of the server binary itself, which lives outside /usr.
func bwrapArgv(bwrap, server string) []string {
	return []string{bwrap, "--unshare-all", "--uid", "65534", "--gid", "65534",
		"--ro-bind", "/usr", "/usr", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
		"--ro-bind", server, server, server}
}

// spawnInterleaved times spawn → initialize of each chain b.N times, the
// chains taking turns so that machine noise falls on all alike; also, when
// not nil, adds samples of its own in each round.
func spawnInterleaved(b *testing.B, chains []chain, also func(samples)) samples {
	for _, c := range chains {
		spawnToInitialize(b, c.argv) // warm the page cache
	}
	got := samples{}
	b.ResetTimer()
	for range b.N {
		for _, c := range chains {
			got[c.name] = append(got[c.name], spawnToInitialize(b, c.argv))
		}
		if also != nil {
			also(got)
		}
	}
	b.StopTimer()
	return got
}

// BenchmarkSpawnInitialize: spawn → initialize result of a static Go MCP
// server, direct, through `mcpsandbox run` (confined: namespaces, seccomp,
// cgroups) and under bubblewrap. Target: mcpsandbox ≤ 1.0× bwrap.
//
// It also times `mcpsandbox version`, the supervisor binary starting and
// exiting with nothing else to do. Any design that evaluates the policy in
// mcpsandbox's Go code before the server starts takes at least that plus
// the direct server: reported as floor-ms and x-floor-vs-bwrap.
//
// And the supervisor binary's own exec → main (`mcpsandbox` with no
// command, which prints its usage on stderr from main at once) beside a
// minimal Go program's (bench/minimal): supervisor-main-ms, minimal-main-ms
// and their ratio x-main-vs-minimal, what linking and initialising
// mcpsandbox's packages costs every start.
func BenchmarkSpawnInitialize(b *testing.B) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		b.Fatal("bubblewrap is needed as the baseline: apt-get install -y bubblewrap")
	}
	server := bins.staticserver
	chains := []chain{
		{"direct", []string{server}},
		{"mcpsandbox", []string{bins.mcpsandbox, "run", "--log-level", "warn", "--", server}},
		{"bwrap", bwrapArgv(bwrap, server)},
	}
	if bins.baseline != "" {
		chains = append(chains, chain{"baseline", []string{bins.baseline, "run", "--log-level", "warn", "--", server}})
	}
	version := []string{bins.mcpsandbox, "version"}
	got := spawnInterleaved(b, chains, func(got samples) {
		got["supervisor-start"] = append(got["supervisor-start"], spawnToLine(b, version, "", "mcpsandbox"))
		got["supervisor-main"] = append(got["supervisor-main"], spawnToMain(b, []string{bins.mcpsandbox}))
		got["minimal-main"] = append(got["minimal-main"], spawnToMain(b, []string{bins.minimal}))
	})
	got.report(b, "ms")
	floor := got.median("supervisor-start") + got.median("direct")
	b.ReportMetric(float64(floor)/1e6, "floor-ms")
	b.ReportMetric(float64(floor)/float64(got.median("bwrap")), "x-floor-vs-bwrap")
	b.ReportMetric(float64(got.median("supervisor-main"))/float64(got.median("minimal-main")), "x-main-vs-minimal")
}
