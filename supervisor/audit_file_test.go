package supervisor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func fileMode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// The audit log is created 0600 and, past its maximum size, rotated to
// FILE.1..FILE.3, the oldest generation dropped; each file stays within the
// bound and 0600.
func TestAuditFileRotatesBySizeKeepingThreeGenerations(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "audit.log")
	f, narrowed, err := openAuditFile(path, 100)
	if err != nil || narrowed {
		t.Fatalf("open: %v (narrowed %v)", err, narrowed)
	}
	if m := fileMode(t, path); m != 0o600 {
		t.Errorf("created with mode %v, want 0600", m)
	}
	for i := range 12 { // 39-byte lines: two per file
		if err := f.write(fmt.Appendf(nil, "%38d\n", i)); err != nil {
			t.Fatal(err)
		}
	}
	f.close()
	want := map[string]string{"": "10 11", ".1": "8 9", ".2": "6 7", ".3": "4 5"}
	for suffix, lines := range want {
		data, err := os.ReadFile(path + suffix)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for l := range strings.Lines(string(data)) {
			var n int
			fmt.Sscan(l, &n)
			got = append(got, fmt.Sprint(n))
		}
		if strings.Join(got, " ") != lines || len(data) > 100 {
			t.Errorf("audit.log%s holds lines %v (%d bytes), want %s", suffix, got, len(data), lines)
		}
		if m := fileMode(t, path+suffix); m != 0o600 {
			t.Errorf("audit.log%s has mode %v, want 0600", suffix, m)
		}
	}
	if _, err := os.Stat(path + ".4"); !os.IsNotExist(err) {
		t.Errorf("audit.log.4 exists (%v); three generations are kept", err)
	}
}

// An existing log readable by others is appended to and narrowed to 0600;
// a symbolic link or a directory is refused.
func TestAuditFileNarrowsModeAndRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	if err := os.WriteFile(path, []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o644)
	f, narrowed, err := openAuditFile(path, 0)
	if err != nil || !narrowed {
		t.Fatalf("open: %v (narrowed %v)", err, narrowed)
	}
	f.write([]byte("after\n"))
	f.close()
	if data, _ := os.ReadFile(path); string(data) != "before\nafter\n" {
		t.Errorf("file holds %q, want the line appended", data)
	}
	if m := fileMode(t, path); m != 0o600 {
		t.Errorf("mode %v, want 0600", m)
	}
	link := filepath.Join(dir, "link.log")
	os.Symlink(path, link)
	if _, _, err := openAuditFile(link, 0); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("symlink: %v, want a refusal", err)
	}
	if _, _, err := openAuditFile(dir, 0); err == nil {
		t.Error("a directory was accepted")
	}
}
