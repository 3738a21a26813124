package launch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// npxCache makes dir hold an npm cache whose npx installs name pkgs, one
// install each, as npx leaves them.
func npxCache(t *testing.T, dir string, pkgs ...string) {
	t.Helper()
	for i, p := range pkgs {
		write(t, filepath.Join(dir, "npm", "_npx", "h"+string(rune('0'+i)), "package.json"), `{"dependencies":{"`+p+`":"^1.0.0"}}`, 0o644)
	}
	write(t, filepath.Join(dir, "memory.jsonl"), "{}\n", 0o644)
}

// The state directory a server had before names kept the npm scope moves
// to its new name when what it holds names only this server; one that
// servers of that former name shared stays, and says why.
func TestFormerStateMovesOnlyWhenItIsThisServers(t *testing.T) {
	base := t.TempDir()
	h := withEnv(Host{Home: "/home/u", WorkDir: base}, map[string]string{"MCPSANDBOX_STATE_DIR": base})
	read := func(cmd ...string) Launch { return Read(cmd, nil, h) }
	npxCache(t, filepath.Join(base, "server-memory"), "@modelcontextprotocol/server-memory")
	npxCache(t, filepath.Join(base, "mcp"), "@playwright/mcp", "@stripe/mcp")
	write(t, filepath.Join(base, "mcp-server-git", "uv", "wheels-v5", "pypi", "mcp-server-git", "x.whl"), "", 0o644)
	write(t, filepath.Join(base, "weather", "notes"), "", 0o644)
	write(t, filepath.Join(base, "tools", "npm", "_npx", "h0", "node_modules", "x"), "", 0o644) // an install cut short

	for _, c := range []struct {
		cmd    []string
		from   string
		move   bool
		whyHas string
	}{
		{[]string{"npx", "-y", "@modelcontextprotocol/server-memory@2026.1.1"}, "server-memory", true, "holds @modelcontextprotocol/server-memory and nothing else's"},
		{[]string{"npx", "-y", "@playwright/mcp"}, "mcp", false, "other servers too (@stripe/mcp)"},
		{[]string{"npx", "-y", "@stripe/mcp"}, "mcp", false, "other servers too (@playwright/mcp)"},
		{[]string{"npx", "-y", "@azure-devops/mcp"}, "mcp", false, "@playwright/mcp, @stripe/mcp"},
		{[]string{"uvx", "mcp-server-git"}, "mcp-server-git", true, "holds mcp-server-git"},
		{[]string{"npx", "-y", "mcp-server-git"}, "mcp-server-git", false, "a uvx tool"},
		{[]string{"node", "/opt/weather/build/index.js"}, "weather", false, "nothing in it says whose it is"},
		{[]string{"npx", "-y", "@scope/tools"}, "tools", false, "an install naming no package"},
	} {
		f := read(c.cmd...).FormerState()
		from := ""
		if c.from != "" {
			from = filepath.Join(base, c.from)
		}
		if f.Dir != from || f.Move != c.move || !strings.Contains(f.Why, c.whyHas) {
			t.Errorf("%q: former state %+v; want %s, move %v, why saying %q", c.cmd, f, from, c.move, c.whyHas)
		}
	}
	// Once the server has its own, the former one is no longer its.
	l := read("npx", "-y", "@modelcontextprotocol/server-memory")
	mkdirs(t, l.StateDir)
	if f := l.FormerState(); f.Dir != "" {
		t.Errorf("with %s made, the former state is still %+v", l.StateDir, f)
	}
	if _, err := os.Stat(filepath.Join(base, "server-memory")); err != nil {
		t.Errorf("looking moved something: %v", err)
	}
}

// The former state directory is the server's to write: an install list
// that is a symbolic link (to a file naming the package, say) is not read
// through, and the directory stays where it is.
func TestFormerStateReadsNoLinkTheServerLeft(t *testing.T) {
	base := t.TempDir()
	h := withEnv(Host{Home: "/home/u", WorkDir: base}, map[string]string{"MCPSANDBOX_STATE_DIR": base})
	elsewhere := filepath.Join(t.TempDir(), "package.json")
	write(t, elsewhere, `{"dependencies":{"@good/linked":"^1.0.0"}}`, 0o644)
	mkdirs(t, filepath.Join(base, "linked", "npm", "_npx", "h0"))
	if err := os.Symlink(elsewhere, filepath.Join(base, "linked", "npm", "_npx", "h0", "package.json")); err != nil {
		t.Fatal(err)
	}
	f := Read([]string{"npx", "-y", "@good/linked"}, nil, h).FormerState()
	if f.Dir != filepath.Join(base, "linked") || f.Move || !strings.Contains(f.Why, "an install naming no package") {
		t.Errorf("a former state whose install list is a link: %+v; want it left, as an install naming no package", f)
	}
}
