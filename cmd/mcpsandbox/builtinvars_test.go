package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every built-in `policy list` names is chosen by a launch line it is for
// and loads as run would apply it on this host, with the real ${HOME},
// ${PWD}, ${STATE}, ${PROJECT} and arguments: valid, every ${...}
// expanded, every grant an absolute path that exists here.
func TestEveryBuiltinLoadsForItsLaunchLineOnThisHost(t *testing.T) {
	dir := t.TempDir()
	touch := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	touch("nodeproj/package.json", `{"name": "some-local-server"}`)
	script := touch("nodeproj/src/server.js", "")
	pyScript := touch("pyproj/server.py", "")
	touch("pyproj/pyproject.toml", "")
	repo := filepath.Dir(filepath.Dir(touch("repo/.git/HEAD", "")))
	db := touch("db/test.db", "")
	lines := map[string][][]string{
		"default":             {{"sh", "-c", "exec some-server"}},
		"node":                {{"node", script}},
		"python":              {{"python3", pyScript}},
		"npx":                 {{"npx", "-y", "some-unlisted-mcp-server@1.0.0"}},
		"uvx":                 {{"uvx", "some-unlisted-mcp-server"}},
		"filesystem":          {{"npx", "-y", "@modelcontextprotocol/server-filesystem@2026.8.31", dir}},
		"memory":              {{"npx", "-y", "@modelcontextprotocol/server-memory@2026.8.31"}},
		"everything":          {{"npx", "-y", "@modelcontextprotocol/server-everything@2026.8.31"}},
		"sequential-thinking": {{"npx", "-y", "@modelcontextprotocol/server-sequential-thinking@2026.8.31"}},
		"github":              {{"npx", "-y", "@modelcontextprotocol/server-github@2025.4.8"}, {"github-mcp-server", "stdio"}},
		"gitlab":              {{"npx", "-y", "@modelcontextprotocol/server-gitlab@2025.4.25"}},
		"brave-search":        {{"npx", "-y", "@modelcontextprotocol/server-brave-search@0.6.2"}},
		"slack":               {{"npx", "-y", "@modelcontextprotocol/server-slack@2025.4.25"}},
		"postgres":            {{"npx", "-y", "@modelcontextprotocol/server-postgres@0.6.2", "postgresql://localhost/none"}},
		"puppeteer":           {{"npx", "-y", "@modelcontextprotocol/server-puppeteer@2025.5.12"}},
		"playwright":          {{"npx", "@playwright/mcp@0.0.83", "--headless"}},
		"fetch":               {{"uvx", "mcp-server-fetch"}},
		"git":                 {{"uvx", "mcp-server-git", "--repository", repo}},
		"time":                {{"uvx", "mcp-server-time", "--local-timezone", "Europe/Paris"}},
		"sqlite":              {{"uvx", "mcp-server-sqlite", "--db-path", db}},
	}
	listed, _, code := runCLI(t, "policy", "list")
	if code != exitOK {
		t.Fatalf("policy list: exit %d", code)
	}
	for entry := range strings.SplitSeq(strings.TrimSpace(listed), "\n") {
		name := strings.Fields(entry)[0]
		if len(lines[name]) == 0 {
			t.Errorf("no launch line for the built-in %s: add one here (and a case to the end-to-end tests)", name)
		}
		for _, line := range lines[name] {
			t.Run(name+"/"+filepath.Base(line[0]), func(t *testing.T) { checkBuiltinFor(t, name, line) })
		}
	}
}

// checkBuiltinFor checks that run applies the built-in name to line.
func checkBuiltinFor(t *testing.T, name string, line []string) {
	r, status, ok := runPolicy("run", append([]string{"--"}, line...), stdio{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard})
	if !ok {
		t.Fatalf("run -- %s: refused (status %d)", strings.Join(line, " "), status)
	}
	if r.Ref != name || !r.Chosen {
		t.Errorf("run -- %s applies %q, want the built-in %s", strings.Join(line, " "), r.Ref, name)
	}
	p := r.Policy
	if err := p.Validate(); err != nil {
		t.Errorf("applied, it is not valid: %v", err)
	}
	if s := fmt.Sprintf("%+v", p); strings.Contains(s, "${") {
		t.Errorf("a ${...} is left unexpanded: %s", s)
	}
	paths := append(p.ReadOnly, p.ReadWrite...)
	if p.WorkDir != "" {
		paths = append(paths, p.WorkDir)
	}
	for _, g := range paths {
		if _, err := os.Stat(g); !filepath.IsAbs(g) || err != nil {
			t.Errorf("grant or workdir %q: not an existing absolute path here (%v)", g, err)
		}
	}
	if p.State && !strings.Contains(filepath.Base(r.StateDir()), strings.Replace(r.Launch.Name, "/", "+", 1)) {
		t.Errorf("state dir %q, want one named for the server %s", r.StateDir(), r.Launch.Name)
	}
}
