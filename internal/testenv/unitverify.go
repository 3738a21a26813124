package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// VerifyUnit runs `systemd-analyze verify` (Debian's systemd package; the
// caller checks that it is there) on unit, written as a file named name,
// for a user manager when user is set, and returns what it reported:
// verify exits 0 on unknown keys, so the output is what counts.
func VerifyUnit(t testing.TB, name string, user bool, unit string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"verify", "--man=no", path}
	if user {
		args = append([]string{"--user"}, args...)
	}
	cmd := exec.Command("systemd-analyze", args...)
	// A user manager's RuntimeDirectory= lives in XDG_RUNTIME_DIR.
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+dir, "SYSTEMD_LOG_COLOR=0")
	out, err := cmd.CombinedOutput()
	if err != nil && len(out) == 0 {
		t.Fatalf("systemd-analyze %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}
