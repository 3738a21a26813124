package testenv

import (
	"os"
	"os/exec"
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

// NPMModule returns the directory of a module that the npm on PATH is built
// from, e.g. NPMModule(t, "pacote"), for tests that check what npm itself
// would do. NodeSource's npm bundles its modules; Debian's npm has them in
// /usr/share/nodejs. Under -short the test is skipped.
func NPMModule(t testing.TB, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: runs npm's own code in node")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("npm is not on PATH: run scripts/test-setup.sh")
	}
	if real, err := filepath.EvalSymlinks(npm); err == nil {
		npm = real
	}
	dirs := []string{filepath.Join(filepath.Dir(filepath.Dir(npm)), "node_modules", name), filepath.Join("/usr/share/nodejs", name)}
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, "package.json")); err == nil {
			return dir
		}
	}
	t.Fatalf("npm (%s) has no module %s in %v: reinstall npm (scripts/test-setup.sh)", npm, name, dirs)
	return ""
}
