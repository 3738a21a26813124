package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// RepoRoot returns the repository root (the directory holding go.mod).
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testenv: go.mod not found above the working directory")
		}
		dir = parent
	}
}

// NPMServer returns the entry point of a pinned npm reference server, e.g.
// NPMServer(t, "server-everything"). The servers are installed by
// scripts/test-setup.sh; a missing one fails the test with that fix. Under
// -short the test is skipped: the quick loop needs no npm.
func NPMServer(t testing.TB, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the npm reference servers are for the full suite (scripts/test.sh installs them)")
	}
	dir := os.Getenv("MCPSANDBOX_NPM_DIR")
	if dir == "" {
		dir = filepath.Join(RepoRoot(t), "testdata", "npm", "node_modules")
	}
	entry := filepath.Join(dir, "@modelcontextprotocol", name, "dist", "index.js")
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("npm reference server %s is not installed (%v): run scripts/test-setup.sh", name, err)
	}
	return entry
}
