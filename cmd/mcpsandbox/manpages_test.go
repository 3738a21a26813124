package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The packages' man pages: one per command and the overview, each read by
// groff without a warning.
func TestHelpManWritesAPagePerCommand(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SOURCE_DATE_EPOCH", "1790000000")
	if _, stderr, code := runCLI(t, "help", "--man", dir); code != exitOK {
		t.Fatalf("help --man: exit %d: %s", code, stderr)
	}
	names := []string{"mcpsandbox"}
	for _, c := range commands {
		names = append(names, "mcpsandbox-"+c.Name)
	}
	_, groffErr := exec.LookPath("groff")
	for _, name := range names {
		page, err := os.ReadFile(filepath.Join(dir, name+".1"))
		if err != nil {
			t.Error(err)
			continue
		}
		if !bytes.Contains(page, []byte(`"2026-09-21"`)) {
			t.Errorf("%s.1 is not dated by SOURCE_DATE_EPOCH:\n%s", name, page[:80])
		}
		if groffErr != nil {
			continue
		}
		cmd := exec.Command("groff", "-man", "-Tutf8", "-ww", "-z")
		cmd.Stdin = bytes.NewReader(page)
		if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("groff on %s.1: %v %s", name, err, out)
		}
	}
	if _, stderr, code := runCLI(t, "help", "--man", dir, "run"); code != exitUsage || !strings.Contains(stderr, "give no command") {
		t.Errorf("help --man DIR run: exit %d: %s", code, stderr)
	}
}
