package testnet

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/internal/testnet/netclient"
)

// BuildKit puts the clients in one directory every user can read (the
// sandbox grants it with --ro): the MCP test server mcpnet, built static,
// which is also the Go client; the Node and Python client scripts; the ws
// package. The programs it finds on the system's own PATH, never the
// test's (a pyenv shim would not exist inside the sandbox). ca is the CA
// file the clients trust. Under -short the test is skipped.
func BuildKit(t testing.TB, ca string) *netclient.Kit {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the egress clients (node, python, curl, psql, a Go build) are for the full suite")
	}
	root := testenv.RepoRoot(t)
	dir := testenv.SharedDir(t, "mcpsandbox-netclients-")
	k := &netclient.Kit{Dir: dir, CA: ca, Go: filepath.Join(dir, "mcpnet")}

	build := exec.Command("go", "build", "-o", k.Go, "./testdata/egress/mcpnet")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("testnet: building mcpnet: %v\n%s", err, out)
	}
	if err := copyTree(filepath.Join(root, "testdata", "egress", "clients"), dir); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "testdata", "npm", "node_modules", "ws")
	if _, err := os.Stat(filepath.Join(ws, "package.json")); err != nil {
		t.Fatalf("testnet: the ws package is not installed (%v): run scripts/test-setup.sh", err)
	}
	if err := copyTree(ws, filepath.Join(dir, "node_modules", "ws")); err != nil {
		t.Fatal(err)
	}

	for _, p := range []struct {
		field *string
		name  string
	}{{&k.Node, "node"}, {&k.Python, "python3"}, {&k.Curl, "curl"}} {
		if *p.field = systemProgram(p.name); *p.field == "" {
			t.Fatalf("testnet: %s is not installed in /usr/local/bin, /usr/bin or /bin: run scripts/test-setup.sh", p.name)
		}
	}
	if k.Psql = newest("/usr/lib/postgresql/*/bin/psql"); k.Psql == "" {
		t.Fatal("testnet: psql is not installed (/usr/lib/postgresql/*/bin/psql): run scripts/test-setup.sh")
	}
	return k
}

// systemProgram finds name on the system's default PATH.
func systemProgram(name string) string {
	for _, d := range []string{"/usr/local/bin", "/usr/bin", "/bin"} {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// newest is the match of pattern in the highest-numbered directory (a
// PostgreSQL major version).
func newest(pattern string) string {
	found, _ := filepath.Glob(pattern)
	sort.Slice(found, func(i, j int) bool { return pgMajor(found[i]) > pgMajor(found[j]) })
	if len(found) == 0 {
		return ""
	}
	return found[0]
}

// copyTree copies the regular files under src into dst, readable by all.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, 0o644)
	})
}
