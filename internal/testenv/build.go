package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// HostileEnv names a prebuilt hostile server binary (see BuildHostile).
const HostileEnv = "MCPSANDBOX_TEST_HOSTILE"

// SharedDir is a fresh directory every user may read and enter (t.TempDir's
// parents are private to root), for files a sandbox user must reach.
func SharedDir(t testing.TB, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// BuildHostile builds the hostile test server (internal/hostile), static,
// into a SharedDir so that any sandbox user can exec it.
// MCPSANDBOX_TEST_HOSTILE names a prebuilt one instead, for machines
// without Go such as the test guest.
func BuildHostile(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(SharedDir(t, "mcpsandbox-hostile-"), "hostile")
	if prebuilt := os.Getenv(HostileEnv); prebuilt != "" {
		// A copy, alone in its directory, as a fresh build would be.
		data, err := os.ReadFile(prebuilt)
		if err == nil {
			err = os.WriteFile(bin, data, 0o755)
		}
		if err != nil {
			t.Fatalf("copying the prebuilt hostile server (%s): %v", HostileEnv, err)
		}
		return bin
	}
	cmd := exec.Command("go", "build", "-o", bin, "./internal/hostile")
	cmd.Dir = RepoRoot(t)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the hostile server: %v\n%s", err, out)
	}
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// SelfForOthers copies the running test binary into a SharedDir, where an
// unprivileged uid can exec it (go test's build directory is private to
// root), and returns the copy's path.
func SelfForOthers(t testing.TB) string {
	t.Helper()
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(SharedDir(t, "mcpsandbox-test-bin-"), filepath.Base(os.Args[0]))
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// ProcessesRunning lists the pids whose command line starts with exe.
func ProcessesRunning(exe string) []string {
	var pids []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.HasPrefix(cmd, []byte(exe+"\x00")) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}
