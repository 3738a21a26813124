package launch

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// applied is what Apply grants for cmd under the built-in it selects,
// with filesystem.args set to mode.
func applied(t *testing.T, cmd []string, h Host, mode string) (policy.Policy, error) {
	t.Helper()
	l := Read(cmd, builtins(t), h)
	p := policy.Default()
	p.GrantArgs = mode
	err := l.Apply(&p)
	return p, err
}

func TestArgs(t *testing.T) {
	dir := t.TempDir()
	h := testHost(t, dir)
	data := filepath.Join(dir, "data")
	notes := filepath.Join(dir, "notes")
	db := filepath.Join(dir, "db", "app.sqlite")
	mkdirs(t, data, notes, filepath.Join(h.WorkDir, "rel"))
	write(t, db, "", 0o644)
	write(t, filepath.Join(h.Home, "home.db"), "", 0o644)
	// A package operand that happens to name something here is no path.
	mkdirs(t, filepath.Join(h.WorkDir, "mcp-server-git"), filepath.Join(h.WorkDir, "@modelcontextprotocol", "server-filesystem"))
	// Nor is the script a node server runs.
	script := filepath.Join(dir, "srv", "index.js")
	write(t, script, "", 0o644)

	cmd := []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", data, "rel", "--root=" + notes,
		"missing", "https://example.com/x", "@modelcontextprotocol/server-filesystem", db}
	p, err := applied(t, cmd, h, policy.GrantRO)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{data, filepath.Join(h.WorkDir, "rel"), notes, db}; !slices.Equal(p.ReadOnly, want) || len(p.ReadWrite) != 0 {
		t.Errorf("ro: ReadOnly %q ReadWrite %q, want ReadOnly %q", p.ReadOnly, p.ReadWrite, want)
	}
	p, err = applied(t, cmd, h, policy.GrantRW)
	if err != nil {
		t.Fatal(err)
	}
	// A file's directory: SQLite writes its journal beside the database.
	if want := []string{data, filepath.Join(h.WorkDir, "rel"), notes, filepath.Dir(db)}; !slices.Equal(p.ReadWrite, want) || len(p.ReadOnly) != 0 {
		t.Errorf("rw: ReadWrite %q ReadOnly %q, want ReadWrite %q", p.ReadWrite, p.ReadOnly, want)
	}
	if p, _ := applied(t, cmd, h, policy.GrantNone); len(p.ReadOnly)+len(p.ReadWrite) != 0 {
		t.Errorf("none: granted %q %q", p.ReadOnly, p.ReadWrite)
	}

	for _, c := range []struct {
		cmd  []string
		want []string
	}{
		// A file in the home directory: the file, never the home directory.
		{[]string{"uvx", "mcp-server-sqlite", "--db-path", filepath.Join(h.Home, "home.db")}, []string{filepath.Join(h.Home, "home.db")}},
		{[]string{"uvx", "--from", "mcp-server-git", "mcp-server-git", "--repository", data}, []string{data}},
		{[]string{"uvx", "mcp-server-git"}, nil},
		{[]string{"node", script, data}, []string{data}},
		{[]string{"node", "--require=" + script, script, data}, []string{data}},
		{[]string{"python3", "-m", "mcp_server_git", data}, []string{data}},
		// A program launch reads nothing of: every argument is its own.
		{[]string{"my-server", data, "mcp-server-git"}, []string{data, filepath.Join(h.WorkDir, "mcp-server-git")}},
	} {
		p, err := applied(t, c.cmd, h, policy.GrantRW)
		if err != nil || !slices.Equal(p.ReadWrite, c.want) {
			t.Errorf("rw %q: ReadWrite %q (%v), want %q", c.cmd, p.ReadWrite, err, c.want)
		}
	}
}

func TestArgsNeverGranted(t *testing.T) {
	h := testHost(t, t.TempDir())
	link := filepath.Join(h.WorkDir, "root")
	if err := os.Symlink("/", link); err != nil {
		t.Fatal(err)
	}
	for _, arg := range []string{"/", "/proc", "/proc/self", "/sys", "/dev", "/dev/null", "--root=/", "/tmp/..", link} {
		cmd := []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", arg}
		for _, mode := range []string{policy.GrantRO, policy.GrantRW} {
			_, err := applied(t, cmd, h, mode)
			if err == nil || !strings.Contains(err.Error(), "never grants") || !strings.Contains(err.Error(), "GrantArgs") {
				t.Errorf("%s %q: %v, want a refusal naming GrantArgs", mode, arg, err)
			}
		}
		// Without grants from the arguments there is nothing to refuse.
		if _, err := applied(t, cmd, h, policy.GrantNone); err != nil {
			t.Errorf("none %q: %v", arg, err)
		}
	}
}

// Script names the file a node or python line runs, for the sandbox to
// keep read-only; none for packages, modules and inline code.
func TestScript(t *testing.T) {
	for _, c := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"node", "--enable-source-maps", "dist/index.js", "--port", "1"}, "dist/index.js"},
		{[]string{"/usr/local/bin/node", "-r", "ts-node/register", "/srv/s.ts"}, "/srv/s.ts"},
		{[]string{"python3", "-u", "server.py"}, "server.py"},
		{[]string{"python3", "-m", "mcp_server_git"}, ""},
		{[]string{"node", "-e", "require('x')"}, ""},
		{[]string{"npx", "-y", "@modelcontextprotocol/server-memory"}, ""},
		{[]string{"./server"}, ""},
		{nil, ""},
	} {
		if got := Script(c.cmd); got != c.want {
			t.Errorf("Script(%q) = %q, want %q", c.cmd, got, c.want)
		}
	}
}
