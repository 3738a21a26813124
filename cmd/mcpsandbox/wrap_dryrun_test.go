package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// wrap --dry-run refuses what wrap refuses: a filesystem server granted a
// directory its sandbox user could not use is named as not wrapped, with
// the start's own reason, by both; the dry run exits 1 as wrap does, and
// neither changes the entry.
func TestWrapDryRunRefusesWhatWrapRefuses(t *testing.T) {
	dir := filepath.Join(testenv.SharedDir(t, "mcpsandbox-wrapcheck-"), "notes")
	if err := os.Mkdir(dir, 0o000); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		// Another user's directory no one may enter: its owner is shown
		// to the server as itself, and still may not read it.
		if err := os.Chown(dir, testenv.UnprivUID, testenv.UnprivUID); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	orig := fmt.Sprintf(`{"mcpServers": {
  "notes": {"command": "npx", "args": ["-y", %q, %q]},
  "local": {"command": "node", "args": ["/srv/server.js"]}
}}
`, filesystemPkg, dir)
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	want := "  notes: not wrapped: the server could not start: --rw " + dir + ": is owned by "
	dry, _, dryCode := runCLI(t, "wrap", "--dry-run", "--command", wrapTestCommand, path)
	real, realErr, realCode := runCLI(t, "wrap", "--command", wrapTestCommand, path)
	for _, c := range []struct {
		what, out string
		code      int
	}{{"wrap --dry-run", dry, dryCode}, {"wrap", real, realCode}} {
		if c.code != exitFailure || !strings.Contains(c.out, want) || !strings.Contains(c.out, "  local: wrapped: ") {
			t.Errorf("%s: exit %d, want %d, %q and local wrapped:\n%s", c.what, c.code, exitFailure, want, c.out)
		}
	}
	line := func(out string) string {
		i := strings.Index(out, want)
		if i < 0 {
			return ""
		}
		l, _, _ := strings.Cut(out[i:], "\n")
		return l
	}
	if line(dry) != line(real) {
		t.Errorf("the dry run and wrap give other reasons:\n%s\n%s", line(dry), line(real))
	}
	if strings.Contains(realErr, "preparing notes") {
		t.Errorf("wrap prepared a server it then refused:\n%s", realErr)
	}
	after := entriesOf(t, readFile(t, path))
	if after["notes"].Command != "npx" || after["local"].Command != wrapTestCommand {
		t.Errorf("after wrap:\n%s", readFile(t, path))
	}
	if !bytes.Contains(readFile(t, path), []byte(dir)) {
		t.Errorf("the entry lost its directory:\n%s", readFile(t, path))
	}
}
