package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/containerd/cgroups/v3"

	"github.com/mcpsandbox/mcpsandbox/sandbox/scope"
)

// requireSystemdV2Root skips unless on pure cgroup v2 with systemd as init,
// as root (the test guest), and returns bubblewrap's path.
func requireSystemdV2Root(b *testing.B) string {
	if cgroups.Mode() != cgroups.Unified || os.Geteuid() != 0 {
		b.Skip("needs root on pure cgroup v2")
	}
	if _, err := os.Stat("/run/systemd/system"); err != nil {
		b.Skip("needs systemd as init")
	}
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		b.Fatal("bubblewrap is needed as the baseline: apt-get install -y bubblewrap")
	}
	return bwrap
}

// BenchmarkSpawnScope: spawn → initialize on a systemd + cgroup v2 machine
// (the test guest), as root, with and without the scope request:
// `mcpsandbox run` started in a cgroup of its own that it may use as it is
// ("no-scope"), and in a cgroup shared with other processes, from which it
// asks systemd for a scope ("mcpsandbox": every desktop host's case), with
// bubblewrap and the direct server beside. Both mcpsandbox chains start
// through the same sh, which moves the first into its cgroup.
func BenchmarkSpawnScope(b *testing.B) {
	bwrap := requireSystemdV2Root(b)
	own := fmt.Sprintf("/sys/fs/cgroup/mcpsandbox-bench-%d", os.Getpid())
	if err := os.Mkdir(own, 0o755); err != nil {
		b.Fatal(err)
	}
	defer func() {
		os.Remove(own + "/mcpsandbox-supervisor")
		os.Remove(own)
	}()
	server := bins.staticserver
	run := []string{bins.mcpsandbox, "run", "--log-level", "warn", "--", server}
	sh := func(into string) []string {
		return append([]string{"/bin/sh", "-c", `[ -z "$0" ] || echo $$ > "$0/cgroup.procs"; exec "$@"`, into}, run...)
	}
	chains := []chain{
		{"direct", []string{server}},
		{"no-scope", sh(own)},
		{"mcpsandbox", sh("")},
		{"bwrap", bwrapArgv(bwrap, server)},
	}
	got := spawnInterleaved(b, chains, nil)
	got.report(b, "ms")
	b.ReportMetric(float64(got.median("mcpsandbox"))/float64(got.median("no-scope")), "x-scope-vs-no-scope")
}

// BenchmarkScopeRequest: the scope request alone, as run makes it (D-Bus to
// the system manager, a transient scope with Delegate=yes for one process,
// until systemd has moved it in), interleaved with bubblewrap's spawn →
// initialize: the ratio is what the request adds to a sandbox start here,
// with less of the noise two whole starts carry.
func BenchmarkScopeRequest(b *testing.B) {
	bwrap := requireSystemdV2Root(b)
	m := scope.ForThisProcess(os.Environ())
	argv := bwrapArgv(bwrap, bins.staticserver)
	spawnToInitialize(b, argv)
	got := samples{}
	b.ResetTimer()
	for i := range b.N {
		child := exec.Command("sleep", "600")
		if err := child.Start(); err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		start := time.Now()
		_, err := scope.Start(ctx, m, scope.Request{Name: fmt.Sprintf("bench-%d", i), Description: "mcpsandbox benchmark", PIDs: []int{child.Process.Pid}})
		got["scope-request"] = append(got["scope-request"], time.Since(start))
		cancel()
		child.Process.Kill()
		child.Wait()
		if err != nil {
			b.Fatal(err)
		}
		got["bwrap"] = append(got["bwrap"], spawnToInitialize(b, argv))
	}
	b.StopTimer()
	got.report(b, "ms")
	b.ReportMetric(float64(got.median("scope-request"))/float64(got.median("bwrap")), "x-request-vs-bwrap-spawn")
}
