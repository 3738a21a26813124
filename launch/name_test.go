package launch

import (
	"path/filepath"
	"strings"
	"testing"
)

// The name is read from the launch line as Choose reads it, by the one
// parser: a flag's value is never taken for the package or script.
func TestNameIsWhatPeopleCallTheServer(t *testing.T) {
	h := testHost(t, t.TempDir())
	for _, c := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/you/notes"}, "@modelcontextprotocol/server-filesystem"},
		{[]string{"/usr/bin/npx", "-y", "@modelcontextprotocol/server-memory@2025.8.4"}, "@modelcontextprotocol/server-memory"},
		{[]string{"npx", "--package", "@scope/tools@1", "--", "tools-cli"}, "@scope/tools"},
		{[]string{"npx", "-y", "github:someone/mcp-thing"}, "mcp-thing"},
		{[]string{"uvx", "mcp-server-git", "--repository", "."}, "mcp-server-git"},
		{[]string{"uvx", "mcp-server-time==1.0"}, "mcp-server-time"},
		{[]string{"uvx", "--python", "3.12", "mcp-server-fetch"}, "mcp-server-fetch"},
		{[]string{"node", "/srv/node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"}, "server-everything"},
		{[]string{"node", "--require", "./preload.js", "/opt/weather/build/index.js"}, "weather"},
		{[]string{"node", "dist/index.js"}, "index"},
		{[]string{"nodejs", "server.js"}, "server"},
		{[]string{"python3", "weather.py"}, "weather"},
		{[]string{"python3", "-m", "mcp_server_time"}, "mcp_server_time"},
		{[]string{"python3.12", "-Im", "mcp_server_git", "--repository", "."}, "mcp_server_git"},
		{[]string{"python3", "-W", "ignore", "/opt/tools/github/server.py"}, "github"},
		{[]string{"python3", "-c", "print(1)"}, "python3"},
		{[]string{"npx", "-c", "some-server --flag"}, "npx"},
		{[]string{"/opt/bin/my-server", "--flag"}, "my-server"},
		{nil, "server"},
	} {
		if got := Read(c.cmd, nil, h).Name; got != c.want {
			t.Errorf("Read(%q).Name = %q, want %q", c.cmd, got, c.want)
		}
	}
}

// Every package, and every launch line that runs other code, has a state
// directory of its own: one server cannot rewrite the packages another
// runs. Names that differ only where a careless mapping would merge them
// (scope dropped, / made -) stay apart.
func TestStateDirsTellServersApart(t *testing.T) {
	dir := t.TempDir()
	h := testHost(t, dir)
	h.Root = true
	// Two projects, each with its own dist/index.js.
	for _, p := range []string{"a/weather", "b/weather"} {
		write(t, filepath.Join(dir, p, "package.json"), `{"name":"weather"}`, 0o644)
		write(t, filepath.Join(dir, p, "dist/index.js"), "", 0o644)
	}
	// Two scoped packages installed side by side: one project.
	for _, p := range []string{"@a/mcp", "@b/mcp"} {
		write(t, filepath.Join(dir, "c/node_modules", p, "package.json"), `{"name":"`+p+`"}`, 0o644)
		write(t, filepath.Join(dir, "c/node_modules", p, "dist/index.js"), "", 0o644)
	}
	lines := [][]string{
		{"npx", "-y", "@playwright/mcp@latest"},
		{"npx", "-y", "@stripe/mcp", "--tools=all"},
		{"npx", "-y", "@azure-devops/mcp"},
		{"npx", "-y", "mcp"},
		{"npx", "-y", "scope-name"},
		{"npx", "-y", "@scope/name"},
		{"npx", "-y", "@scope-name/x"},
		{"npx", "-y", "@scope/name-x"},
		{"npx", "-y", "ids"},
		{"npx", "--package", "@scope/name", "--package", "x", "--", "x"},
		{"npx", "-y", "github:someone/mcp"},
		{"uvx", "mcp"},
		{"uvx", "scope-name"},
		{"python3", "-m", "mcp"},
		{"python3", "-m", "scope_name"},
		{"node", filepath.Join(dir, "a/weather/dist/index.js")},
		{"node", filepath.Join(dir, "b/weather/dist/index.js")},
		{"python3", filepath.Join(dir, "a/weather/dist/index.js")},
		{"node", filepath.Join(dir, "c/node_modules/@a/mcp/dist/index.js")},
		{"node", filepath.Join(dir, "c/node_modules/@b/mcp/dist/index.js")},
		{"/opt/a/mcp"},
		{"/opt/b/mcp"},
		{"node", "-e", "a()"},
		{"node", "-e", "b()"},
	}
	seen := map[string][]string{}
	for _, cmd := range lines {
		l := Read(cmd, nil, h)
		if filepath.Dir(l.StateDir) != "/var/lib/mcpsandbox" {
			t.Errorf("%q: state directory %s is not one element below /var/lib/mcpsandbox", cmd, l.StateDir)
		}
		if el := filepath.Base(l.StateDir); strings.ContainsAny(el, "/: \\\x00") || strings.HasPrefix(el, ".") || el == "ids" {
			t.Errorf("%q: state directory name %q is no harmless path element", cmd, el)
		}
		if !strings.Contains(filepath.Base(l.StateDir), "+") {
			t.Errorf("%q: state directory %s could be a former one (those hold no +), another server's", cmd, l.StateDir)
		}
		if other, ok := seen[l.StateDir]; ok {
			t.Errorf("%q and %q share the state directory %s", other, cmd, l.StateDir)
		}
		seen[l.StateDir] = cmd
		if l.NameWhy == "" {
			t.Errorf("%q: no reason for its name", cmd)
		}
	}
	want := map[string]string{
		"@playwright/mcp@latest": "/var/lib/mcpsandbox/npm+@playwright+mcp",
		"@scope/name":            "/var/lib/mcpsandbox/npm+@scope+name",
		"scope-name":             "/var/lib/mcpsandbox/npm+scope-name",
	}
	for pkg, dir := range want {
		if got := Read([]string{"npx", "-y", pkg}, nil, h).StateDir; got != dir {
			t.Errorf("npx %s: state directory %s, want %s", pkg, got, dir)
		}
	}
}

// The same server at another version, with other arguments or flags,
// keeps its state (and the package cache prepare filled for it).
func TestStateDirKeptAcrossVersionsAndArguments(t *testing.T) {
	h := testHost(t, t.TempDir())
	for _, same := range [][][]string{
		{{"npx", "-y", "@playwright/mcp@0.0.40"}, {"npx", "@playwright/mcp@latest", "--headless"}, {"npx", "--yes", "--package=@playwright/mcp", "--", "mcp-server-playwright"}},
		{{"uvx", "mcp-server-git==1.0", "--repository", "."}, {"uvx", "--python", "3.12", "mcp_server_git"}, {"uvx", "--from", "Mcp.Server-Git", "mcp-server-git"}},
		{{"python3", "-m", "mcp_server_time"}, {"python3.12", "-Im", "mcp_server_time", "--local-timezone", "UTC"}},
	} {
		want := Read(same[0], nil, h).StateDir
		for _, cmd := range same[1:] {
			if got := Read(cmd, nil, h).StateDir; got != want {
				t.Errorf("%q: state directory %s, want %s as for %q", cmd, got, want, same[0])
			}
		}
	}
}
