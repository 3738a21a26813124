package launch

import (
	"path/filepath"
	"testing"
)

// TestProject: ${PROJECT} as Read gives it for node and python scripts.
func TestProject(t *testing.T) {
	matches := builtins(t)
	dir := t.TempDir()
	h := testHost(t, dir)
	src := filepath.Join(dir, "src")

	// node: the nearest package.json.
	write(t, filepath.Join(src, "nodeapp", "package.json"), `{"name": "nodeapp"}`, 0o644)
	write(t, filepath.Join(src, "nodeapp", "dist", "lib", "index.js"), "", 0o644)
	// python: pyproject.toml, setup.py or requirements.txt.
	write(t, filepath.Join(src, "pyapp", "pyproject.toml"), "", 0o644)
	write(t, filepath.Join(src, "pyapp", "pkg", "server.py"), "", 0o644)
	write(t, filepath.Join(src, "legacy", "setup.py"), "", 0o644)
	write(t, filepath.Join(src, "legacy", "tools", "serve.py"), "", 0o644)
	write(t, filepath.Join(src, "reqs", "requirements.txt"), "", 0o644)
	write(t, filepath.Join(src, "reqs", "main.py"), "", 0o644)
	// A python marker does not make a node project, nor the other way.
	write(t, filepath.Join(src, "mixed", "requirements.txt"), "", 0o644)
	write(t, filepath.Join(src, "mixed", "js", "x.js"), "", 0o644)
	// Inside node_modules: the directory holding the outermost one.
	nm := filepath.Join(src, "proj", "node_modules", "a", "node_modules", "b")
	write(t, filepath.Join(nm, "package.json"), `{"name": "b"}`, 0o644)
	write(t, filepath.Join(nm, "index.js"), "", 0o644)
	// No markers: the script's own directory.
	write(t, filepath.Join(src, "bare", "s.py"), "", 0o644)
	// Never the home directory or /: then the script alone.
	write(t, filepath.Join(h.Home, "server.py"), "", 0o644)
	write(t, filepath.Join(h.Home, "tool", "t.js"), "", 0o644)
	write(t, filepath.Join(h.Home, "package.json"), `{"name": "home"}`, 0o644)
	write(t, filepath.Join(h.Home, "node_modules", "c", "index.js"), "", 0o644)
	// Relative to the working directory.
	write(t, filepath.Join(h.WorkDir, "rel", "pyproject.toml"), "", 0o644)
	write(t, filepath.Join(h.WorkDir, "rel", "app.py"), "", 0o644)

	for _, c := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"node", filepath.Join(src, "nodeapp", "dist", "lib", "index.js")}, filepath.Join(src, "nodeapp")},
		{[]string{"node", filepath.Join(src, "nodeapp")}, filepath.Join(src, "nodeapp")},
		{[]string{"python3", filepath.Join(src, "pyapp", "pkg", "server.py")}, filepath.Join(src, "pyapp")},
		{[]string{"python3", "-u", filepath.Join(src, "legacy", "tools", "serve.py")}, filepath.Join(src, "legacy")},
		{[]string{"python3.11", filepath.Join(src, "reqs", "main.py")}, filepath.Join(src, "reqs")},
		{[]string{"node", filepath.Join(src, "mixed", "js", "x.js")}, filepath.Join(src, "mixed", "js")},
		{[]string{"node", filepath.Join(nm, "index.js")}, filepath.Join(src, "proj")},
		{[]string{"python3", filepath.Join(src, "bare", "s.py")}, filepath.Join(src, "bare")},
		{[]string{"python3", filepath.Join(h.Home, "server.py")}, filepath.Join(h.Home, "server.py")},
		// The home's own package.json is no project: granting it grants home.
		{[]string{"node", filepath.Join(h.Home, "tool", "t.js")}, filepath.Join(h.Home, "tool")},
		{[]string{"node", filepath.Join(h.Home, "node_modules", "c", "index.js")}, filepath.Join(h.Home, "node_modules", "c")},
		{[]string{"python3", "rel/app.py"}, filepath.Join(h.WorkDir, "rel")},
		{[]string{"python3", "missing.py"}, ""},
		{[]string{"node", "-e", "1"}, ""},
		{[]string{"python3", "-m", "http.server"}, ""},
		{[]string{"npx", "-y", "pkg"}, ""},
	} {
		l := Read(c.cmd, matches, h)
		if l.Project != c.want || l.Vars.Project != c.want {
			t.Errorf("Read(%q).Project = %q (Vars %q), want %q", c.cmd, l.Project, l.Vars.Project, c.want)
		}
	}
}

// TestProjectNeverHomeOrRoot: a directory run as a script (node .) that
// is the home directory or / is no project at all.
func TestProjectNeverHomeOrRoot(t *testing.T) {
	matches := builtins(t)
	h := testHost(t, t.TempDir())
	write(t, filepath.Join(h.Home, "package.json"), `{"name": "home"}`, 0o644)
	for _, c := range []struct {
		cmd []string
		wd  string
	}{
		{[]string{"node", "."}, h.Home},
		{[]string{"python3", h.Home}, h.WorkDir},
		{[]string{"node", "/"}, h.WorkDir},
		{[]string{"python3", "."}, "/"},
	} {
		h := h
		h.WorkDir = c.wd
		if l := Read(c.cmd, matches, h); l.Project != "" {
			t.Errorf("Read(%q) in %s: Project = %q, want none", c.cmd, c.wd, l.Project)
		}
	}
}
