package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestOuterLimitConfinesTheTestProcessAndUndoes(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("OuterLimit creates cgroups: needs root")
	}
	if isUnified() {
		t.Skip("this test reads the cgroup v1 files; the v2 path of OuterLimit is not run on this host")
	}
	before, _, err := ownCgroups()
	if err != nil {
		t.Fatal(err)
	}
	var dirs map[string]string
	t.Run("inside", func(t *testing.T) {
		OuterLimit(t, 200<<20, 100)
		inside, _, err := ownCgroups()
		if err != nil {
			t.Fatal(err)
		}
		dirs = map[string]string{}
		for _, c := range []string{"memory", "pids"} {
			if filepath.Dir(inside[c]) != filepath.Clean(before[c]) || !strings.HasPrefix(filepath.Base(inside[c]), "mcpsandbox-test-outer-") {
				t.Fatalf("%s cgroup %s is not a new child of %s", c, inside[c], before[c])
			}
			mount, root, err := v1Mount(c)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root, inside[c])
			dirs[c] = filepath.Join(mount, rel)
		}
		for file, want := range map[string]string{
			filepath.Join(dirs["memory"], "memory.limit_in_bytes"):       "209715200",
			filepath.Join(dirs["memory"], "memory.memsw.limit_in_bytes"): "209715200",
			filepath.Join(dirs["pids"], "pids.max"):                      "100",
		} {
			if got := strings.TrimSpace(readFile(file)); got != want {
				t.Errorf("%s = %q, want %q", file, got, want)
			}
		}
		// What the test starts now is inside too.
		out, err := exec.Command("cat", "/proc/self/cgroup").Output()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), "memory:"+inside["memory"]+"\n") {
			t.Errorf("child's cgroups:\n%s\nwant memory:%s", out, inside["memory"])
		}
		// A leftover a failed test might leave: cleanup must kill it.
		if err := exec.Command("sleep", "1000").Start(); err != nil {
			t.Fatal(err)
		}
	})
	after, _, err := ownCgroups()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"memory", "pids"} {
		if after[c] != before[c] {
			t.Errorf("%s cgroup after cleanup = %s, want %s", c, after[c], before[c])
		}
		if _, err := os.Stat(dirs[c]); !os.IsNotExist(err) {
			t.Errorf("outer cgroup %s not removed (%v)", dirs[c], err)
		}
	}
}
