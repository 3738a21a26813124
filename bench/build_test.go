package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// bins holds the programs every benchmark starts, built once per run.
var bins struct {
	dir, mcpsandbox, minrelay, staticserver, minimal, netclient, pinserver string
	baseline                                                               string // an earlier mcpsandbox, when baselineEnv names one
}

// baselineEnv names an earlier build of mcpsandbox (bench/run.sh builds
// one from BASELINE_REF): the benchmarks then run it beside this one and
// report x-vs-baseline, so a change is judged against the binary before it
// in the same run.
const baselineEnv = "MCPSANDBOX_BENCH_BASELINE"

// prebuiltEnv names a directory holding mcpsandbox, minrelay, staticserver,
// minimal, netclient and pinserver, built already.
const prebuiltEnv = "MCPSANDBOX_BENCH_BINARIES"

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	// Outside /tmp so that bubblewrap's --tmpfs /tmp does not hide it, and
	// world-readable so an unprivileged sandbox user can exec it.
	dir, err := os.MkdirTemp("/var/tmp", "mcpsandbox-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	bins.dir = dir
	// The servers benchmarked are pinned in a lock of the run's, never in
	// the user's (root's /etc/mcpsandbox/lock.json).
	os.Setenv("MCPSANDBOX_LOCK", filepath.Join(dir, "lock.json"))
	bins.baseline = os.Getenv(baselineEnv)
	// A machine without Go (the test guest) brings them prebuilt.
	if pre := os.Getenv(prebuiltEnv); pre != "" {
		bins.mcpsandbox = filepath.Join(pre, "mcpsandbox")
		bins.minrelay = filepath.Join(pre, "minrelay")
		bins.staticserver = filepath.Join(pre, "staticserver")
		bins.minimal = filepath.Join(pre, "minimal")
		bins.netclient = filepath.Join(pre, "netclient")
		bins.pinserver = filepath.Join(pre, "pinserver")
		return m.Run()
	}
	for _, b := range []struct {
		out *string
		pkg string
		cgo string
	}{
		{&bins.mcpsandbox, "../cmd/mcpsandbox", "1"},
		{&bins.minrelay, "./minrelay", "0"},
		{&bins.staticserver, "./staticserver", "0"},
		{&bins.minimal, "./minimal", "0"},
		{&bins.netclient, "./netclient", "0"},
		{&bins.pinserver, "./pinserver", "0"},
	} {
		*b.out = filepath.Join(dir, filepath.Base(b.pkg))
		cmd := exec.Command("go", "build", "-o", *b.out, b.pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED="+b.cgo)
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n%s", b.pkg, err, out)
			return 1
		}
	}
	return m.Run()
}
