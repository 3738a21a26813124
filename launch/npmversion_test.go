package launch

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A floating npx line is pinned by rewriting its one package spec, in
// whichever form npx reads it, and nothing else of the line.
func TestWithVersionRewritesOnlyThePackageSpec(t *testing.T) {
	h := testHost(t, t.TempDir())
	for _, c := range []struct {
		cmd, want []string
		wanted    string
		exact     bool
	}{
		{[]string{"npx", "-y", "@modelcontextprotocol/server-memory"}, []string{"npx", "-y", "@modelcontextprotocol/server-memory@2026.8.31"}, "", false},
		{[]string{"npx", "-y", "pkg@latest", "pkg@latest"}, []string{"npx", "-y", "pkg@2026.8.31", "pkg@latest"}, "latest", false},
		{[]string{"/usr/bin/npx", "--yes", "pkg@^1.2", "--flag"}, []string{"/usr/bin/npx", "--yes", "pkg@2026.8.31", "--flag"}, "^1.2", false},
		{[]string{"npx", "--package=@s/p@1.0.0", "--", "p-cli", "@s/p"}, []string{"npx", "--package=@s/p@2026.8.31", "--", "p-cli", "@s/p"}, "1.0.0", true},
		{[]string{"npx", "-p", "pkg@>=1 <2", "pkg-bin"}, []string{"npx", "-p", "pkg@2026.8.31", "pkg-bin"}, ">=1 <2", false},
		{[]string{"npx", "-y", "--", "pkg@v1.2.3-rc.1"}, []string{"npx", "-y", "--", "pkg@2026.8.31"}, "v1.2.3-rc.1", true},
	} {
		l := Read(c.cmd, nil, h)
		spec, ok := l.NpmSpec()
		if !ok || spec.Wanted != c.wanted || spec.Exact() != c.exact {
			t.Errorf("Read(%q).NpmSpec() = %+v, %v (exact %v); want wanted %q, exact %v", c.cmd, spec, ok, spec.Exact(), c.wanted, c.exact)
		}
		if got := l.WithVersion("2026.8.31"); !slices.Equal(got, c.want) {
			t.Errorf("Read(%q).WithVersion = %q, want %q", c.cmd, got, c.want)
		}
	}
	for _, cmd := range [][]string{
		{"npx", "-y", "github:someone/mcp-thing"},
		{"npx", "-y", "./local"},
		{"npx", "-y", "alias@npm:other"},
		{"npx", "-p", "a", "-p", "b", "a-bin"},
		{"uvx", "mcp-server-git"},
		{"node", "index.js"},
	} {
		l := Read(cmd, nil, h)
		if spec, ok := l.NpmSpec(); ok || l.WithVersion("1.0.0") != nil {
			t.Errorf("Read(%q).NpmSpec() = %+v, true; want none: it installs no single registry package", cmd, spec)
		}
	}
}

// What npx installed is read from npm's lockfile in its directory of the
// cache; a lock's pin is held against it, naming both versions and
// integrities and the commands that fix it when they differ.
func TestCheckPinComparesTheInstalledIntegrity(t *testing.T) {
	l := readNpx(t)
	p := npxPolicy(l)
	dir := npxTree(t, l, true)
	lockfile := func(version, integrity string) {
		write(t, filepath.Join(dir, "node_modules", ".package-lock.json"), `{"name":"x","lockfileVersion":3,"packages":{
  "node_modules/@scope/srv": {"version": "`+version+`", "resolved": "https://registry.example/@scope/srv/-/srv-`+version+`.tgz", "integrity": "`+integrity+`"},
  "node_modules/dep": {"version": "9.9.9", "integrity": "sha512-dep"}}}`, 0o644)
	}
	pin := Pin{Version: "1.0.0", Integrity: "sha512-pinned", Lock: "/etc/mcpsandbox/lock.json"}

	lockfile("1.0.0", "sha512-pinned")
	got, err := l.Installed(p)
	if err != nil || got.Version != "1.0.0" || got.Integrity != "sha512-pinned" {
		t.Fatalf("Installed = %+v, %v", got, err)
	}
	if err := l.CheckPin(p, pin); err != nil {
		t.Errorf("the pinned version installed: %v", err)
	}

	lockfile("1.1.0", "sha512-other")
	err = l.CheckPin(p, pin)
	for _, want := range []string{"the installed @scope/srv is 1.1.0 (sha512-other), but the lock /etc/mcpsandbox/lock.json pins 1.0.0 (sha512-pinned)",
		"`mcpsandbox prepare -- npx -y @scope/srv@1.0.0 --root 'a b'`", "`mcpsandbox upgrade @scope/srv --to 1.1.0`"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("another version installed: %v; want it to say %q", err, want)
		}
	}
	lockfile("1.0.0", "sha512-other")
	if err := l.CheckPin(p, pin); err == nil || !strings.Contains(err.Error(), "the same version from another tarball") {
		t.Errorf("the same version, another integrity: %v", err)
	}

	// What the server could leave there instead is never followed.
	write(t, filepath.Join(l.StateDir, "elsewhere.json"), `{"packages":{"node_modules/@scope/srv":{"version":"1.0.0","integrity":"sha512-pinned"}}}`, 0o644)
	lock := filepath.Join(dir, "node_modules", ".package-lock.json")
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(l.StateDir, "elsewhere.json"), lock); err != nil {
		t.Fatal(err)
	}
	if err := l.CheckPin(p, pin); err == nil || !strings.Contains(err.Error(), "cannot be told") {
		t.Errorf("a symbolic link for the lockfile: %v; want the start refused", err)
	}
}
