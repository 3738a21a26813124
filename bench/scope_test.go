package bench

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/containerd/cgroups/v3"
)

// BenchmarkSpawnScope: spawn → initialize on a systemd + cgroup v2 machine
// (the test guest), as root, what the scope request costs: `mcpsandbox run`
// started in a cgroup of its own that it may use as it is ("no-scope"),
// and started in a cgroup shared with other processes, from which it asks
// systemd for a scope ("mcpsandbox", the case of every desktop host), with
// bubblewrap and the direct server beside. Both mcpsandbox chains start
// through the same sh, which moves the first into its cgroup.
func BenchmarkSpawnScope(b *testing.B) {
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
	b.ReportMetric(float64(got.median("mcpsandbox"))/float64(got.median("no-scope")), "x-scope-vs-no-scope")
	b.ReportMetric(float64(got.median("mcpsandbox")-got.median("no-scope"))/1e6, "scope-request-ms")
}
