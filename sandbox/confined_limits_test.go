package sandbox

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

func TestConfinedStatsComeFromTheCgroup(t *testing.T) {
	requireConfinement(t)
	spec := sbxSpec("/bin/sh", "-c", "echo ready; read x")
	p, err := Start(spec, sbxLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if line, _ := bufio.NewReader(p.Stdout()).ReadString('\n'); line != "ready\n" {
		t.Fatalf("got %q", line)
	}
	st := p.Stats()
	if st.MemoryLimit != uint64(spec.Memory) || st.PidsLimit != uint64(spec.Pids) {
		t.Errorf("limits %d bytes / %d pids, want the spec's %d / %d", st.MemoryLimit, st.PidsLimit, spec.Memory, spec.Pids)
	}
	// The reaper, the shell; the Go runtime's threads count as pids too.
	if st.Pids < 2 || st.MemoryBytes == 0 {
		t.Errorf("usage %d pids, %d bytes; want the running sandbox counted", st.Pids, st.MemoryBytes)
	}
}

func TestConfinedOutOfMemoryIsReported(t *testing.T) {
	requireConfinement(t)
	// A sandbox bug must not let the hog take the machine down.
	testenv.OuterLimit(t, 512<<20, 512)
	spec := sbxSpec("/bin/sh", "-c", `x=0123456789abcdef; while :; do x="$x$x"; done`)
	spec.Memory = 32 << 20
	_, errOut, ex := sbxRun(t, spec)
	if !ex.OOMKilled {
		t.Fatalf("a server that outgrew --memory ended with %v, want OOMKilled\n%s", ex, errOut)
	}
	if !strings.Contains(ex.String(), "out of memory") {
		t.Errorf("exit reads %q", ex)
	}
}

func TestConfinedNodeRuns(t *testing.T) {
	requireConfinement(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	spec := sbxSpec(node, "-e", `require("fs").writeFileSync("/tmp/x", "ok"); console.log(require("fs").readFileSync("/tmp/x", "utf8"), require("os").userInfo().username)`)
	spec.Memory = 512 << 20
	start := time.Now()
	out, errOut, ex := sbxRun(t, spec)
	if ex.Failed() || !strings.HasPrefix(out, "ok sandbox") {
		t.Fatalf("node under the default confinement: %v\nstdout: %s\nstderr: %s", ex, out, errOut)
	}
	t.Logf("node ran confined in %v", time.Since(start))
}

// The server's cgroup has the default CPU weight (cgroup v2 cpu.weight,
// v1 cpu.shares at the same fraction) and no CPU cap, as it sees its cgroup.
func TestConfinedServerGetsTheDefaultCPUWeight(t *testing.T) {
	requireConfinement(t)
	out := sbxShell(t, sbxSpec(), "cat /sys/fs/cgroup/cpu.weight /sys/fs/cgroup/cpu.max 2>/dev/null || cat /sys/fs/cgroup/cpu/cpu.shares /sys/fs/cgroup/cpu/cpu.cfs_quota_us")
	got := strings.Fields(out)
	want := []string{"25", "max", "100000"} // cgroup v2
	if len(got) == 2 {
		want = []string{"256", "-1"} // cgroup v1
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the server's cgroup shows %q, want %q", got, want)
	}
}
