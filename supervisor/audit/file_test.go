package audit

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
func TestFileRotatesBySizeKeepingThreeGenerations(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "audit.log")
	f, narrowed, err := openFile(path, 100, DefaultKeep)
	if err != nil || narrowed {
		t.Fatalf("open: %v (narrowed %v)", err, narrowed)
	}
	if m := fileMode(t, path); m != 0o600 {
		t.Errorf("created with mode %v, want 0600", m)
	}
	for i := range 12 { // 39-byte lines: two per file
		if err := f.write([][]byte{fmt.Appendf(nil, "%38d\n", i)}); err != nil {
			t.Fatal(err)
		}
	}
	f.close()
	checkGenerations(t, path, map[string]string{"": "10 11", ".1": "8 9", ".2": "6 7", ".3": "4 5"})
	if _, err := os.Stat(path + ".4"); !os.IsNotExist(err) {
		t.Errorf("audit.log.4 exists (%v); three generations are kept", err)
	}
}

// A batch of lines is split across rotations as single lines are.
func TestFileRotatesWithinABatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	f, _, err := openFile(path, 100, DefaultKeep)
	if err != nil {
		t.Fatal(err)
	}
	var batch [][]byte
	for i := range 7 {
		batch = append(batch, fmt.Appendf(nil, "%38d\n", i))
	}
	if err := f.write(batch); err != nil {
		t.Fatal(err)
	}
	f.close()
	checkGenerations(t, path, map[string]string{"": "6", ".1": "4 5", ".2": "2 3", ".3": "0 1"})
}

func checkGenerations(t *testing.T, path string, want map[string]string) {
	t.Helper()
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
}

// A file removed or renamed by someone else is noticed at the next write:
// the line goes to a file at the path, not to the one moved away.
func TestFileReopensAFileMovedAway(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	f, _, err := openFile(path, 0, DefaultKeep)
	if err != nil {
		t.Fatal(err)
	}
	f.write([][]byte{[]byte("one\n")})
	if err := os.Rename(path, path+".moved"); err != nil {
		t.Fatal(err)
	}
	f.write([][]byte{[]byte("two\n")})
	f.close()
	if data, _ := os.ReadFile(path + ".moved"); string(data) != "one\n" {
		t.Errorf("the file moved away holds %q, want only the line written before", data)
	}
	if data, _ := os.ReadFile(path); string(data) != "two\n" {
		t.Errorf("the file at the path holds %q, want the line written after", data)
	}
	if m := fileMode(t, path); m != 0o600 {
		t.Errorf("the new file has mode %v, want 0600", m)
	}
}

// An existing log readable by others is appended to and narrowed to 0600;
// a symbolic link or a directory is refused.
func TestFileNarrowsModeAndRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	if err := os.WriteFile(path, []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o644)
	f, narrowed, err := openFile(path, 0, DefaultKeep)
	if err != nil || !narrowed {
		t.Fatalf("open: %v (narrowed %v)", err, narrowed)
	}
	f.write([][]byte{[]byte("after\n")})
	f.close()
	if data, _ := os.ReadFile(path); string(data) != "before\nafter\n" {
		t.Errorf("file holds %q, want the line appended", data)
	}
	if m := fileMode(t, path); m != 0o600 {
		t.Errorf("mode %v, want 0600", m)
	}
	link := filepath.Join(dir, "link.log")
	os.Symlink(path, link)
	if _, _, err := openFile(link, 0, DefaultKeep); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("symlink: %v, want a refusal", err)
	}
	if _, _, err := openFile(dir, 0, DefaultKeep); err == nil {
		t.Error("a directory was accepted")
	}
}
