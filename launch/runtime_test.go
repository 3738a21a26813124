package launch

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/pathrule"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// fakeNVM lays out an nvm installation of node in home: a copy of the
// host's node (not a link: it must be found there, not in /usr) and npx as
// nvm's link into npm. It returns the version's directory.
func fakeNVM(t *testing.T, home string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("no node on this host to lay out as nvm's: %v", err)
	}
	node, _ = filepath.EvalSymlinks(node)
	root := filepath.Join(home, ".nvm", "versions", "node", "v20.0.0")
	bin := filepath.Join(root, "bin")
	mkdirs(t, bin)
	copyFile(t, node, filepath.Join(bin, "node"))
	write(t, filepath.Join(root, "lib", "node_modules", "npm", "bin", "npx-cli.js"), "#!/usr/bin/env node\nconsole.log('npx')\n", 0o755)
	if err := os.Symlink("../lib/node_modules/npm/bin/npx-cli.js", filepath.Join(bin, "npx")); err != nil {
		t.Fatal(err)
	}
	return root
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestRuntimeNVM(t *testing.T) {
	matches := builtins(t)
	h := testHost(t, t.TempDir())
	root := fakeNVM(t, h.Home)
	bin := filepath.Join(root, "bin")
	write(t, filepath.Join(h.Home, "secret.txt"), "secret", 0o600)
	h = withEnv(h, map[string]string{"PATH": bin + ":/usr/bin:/bin"})

	for _, cmd := range [][]string{
		{"node", "-e", "1"},
		{"npx", "-y", "some-unknown-pkg"},
	} {
		l := Read(cmd, matches, h)
		if l.RuntimeErr != nil {
			t.Errorf("Read(%q): %v", cmd, l.RuntimeErr)
		}
		if rt := l.Runtime; !slices.Equal(rt.Roots, []string{root}) || rt.Bin != bin || rt.Shim != "" {
			t.Errorf("Read(%q).Runtime = %+v, want the root %s only, bin %s", cmd, rt, root, bin)
		}
		if !slices.Equal(l.Command, cmd) {
			t.Errorf("Read(%q).Command = %q: no shim, so as given", cmd, l.Command)
		}
		p := policy.Default()
		if err := l.Apply(&p); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(p.ReadOnly, []string{root}) || len(p.ReadWrite) != 0 {
			t.Errorf("Apply(%q) granted ro %q, rw %q; want %s read-only and nothing else", cmd, p.ReadOnly, p.ReadWrite, root)
		}
		if !slices.Contains(p.Env, "PATH="+bin+":"+pathrule.ServerPATH) {
			t.Errorf("Apply(%q) env %q, want PATH with %s first", cmd, p.Env, bin)
		}
	}

	// A policy that passes PATH on, or sets it, keeps its own.
	l := Read([]string{"node", "-e", "1"}, matches, h)
	for _, env := range []string{"PATH", "PATH=/opt/bin"} {
		p := policy.Default()
		p.Env = []string{env}
		if err := l.Apply(&p); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(p.Env, []string{env}) {
			t.Errorf("Apply with env %q: %q", env, p.Env)
		}
	}
}

// TestRuntimeUsr: a program under /usr, or reached through a link into it
// (/bin on a merged /usr), needs no grant: the sandbox shows /usr, and
// follows no symlink in a grant, so /bin would be refused.
func TestRuntimeUsr(t *testing.T) {
	matches := builtins(t)
	h := testHost(t, t.TempDir())
	for _, cmd := range [][]string{{"/bin/sh", "-c", "true"}, {"sh"}, {"/usr/bin/env"}} {
		if _, err := os.Stat(cmd[0]); err != nil && filepath.IsAbs(cmd[0]) {
			continue
		}
		l := Read(cmd, matches, h)
		if len(l.Runtime.Roots) != 0 || l.Runtime.Bin != "" || l.RuntimeErr != nil {
			t.Errorf("Read(%q).Runtime = %+v (%v), want no grant", cmd, l.Runtime, l.RuntimeErr)
		}
	}
	// Not found is for the start to report, as it always has.
	if l := Read([]string{"no-such-program-here"}, matches, h); l.RuntimeErr != nil || len(l.Runtime.Roots) != 0 {
		t.Errorf("a missing program: %+v, %v", l.Runtime, l.RuntimeErr)
	}
}

// TestRuntimeLinkFromElsewhere: ~/.local/bin/x linking into an
// installation (uv, pipx) grants the link's directory and the
// installation, not all of ~/.local.
func TestRuntimeLinkFromElsewhere(t *testing.T) {
	matches := builtins(t)
	h := testHost(t, t.TempDir())
	inst := filepath.Join(h.Home, ".local", "share", "uv", "tools", "srv")
	write(t, filepath.Join(inst, "bin", "srv"), "#!/bin/sh\n", 0o755)
	write(t, filepath.Join(inst, "pyvenv.cfg"), "home = /usr/bin\n", 0o644) // a uv tool is a virtualenv
	localBin := filepath.Join(h.Home, ".local", "bin")
	mkdirs(t, localBin)
	if err := os.Symlink(filepath.Join(inst, "bin", "srv"), filepath.Join(localBin, "srv")); err != nil {
		t.Fatal(err)
	}
	h = withEnv(h, map[string]string{"PATH": localBin + ":/usr/bin"})
	l := Read([]string{"srv"}, matches, h)
	if want := []string{localBin, inst}; !slices.Equal(l.Runtime.Roots, want) {
		t.Errorf("Roots = %q, want %q", l.Runtime.Roots, want)
	}
	// A program in ~/bin: that directory, never the home directory.
	write(t, filepath.Join(h.Home, "bin", "tool"), "#!/bin/sh\n", 0o755)
	l = Read([]string{filepath.Join(h.Home, "bin", "tool")}, matches, h)
	if want := []string{filepath.Join(h.Home, "bin")}; !slices.Equal(l.Runtime.Roots, want) {
		t.Errorf("~/bin/tool: Roots = %q, want %q", l.Runtime.Roots, want)
	}
	// A program directly in the home directory: itself alone.
	write(t, filepath.Join(h.Home, "tool"), "#!/bin/sh\n", 0o755)
	l = Read([]string{filepath.Join(h.Home, "tool")}, matches, h)
	if want := []string{filepath.Join(h.Home, "tool")}; !slices.Equal(l.Runtime.Roots, want) {
		t.Errorf("~/tool: Roots = %q, want %q", l.Runtime.Roots, want)
	}
}

// TestRuntimePyenv resolves this machine's pyenv shim as run would.
func TestRuntimePyenv(t *testing.T) {
	h := FromProcess()
	shims := filepath.Join(h.Home, ".pyenv", "shims")
	if root := os.Getenv("PYENV_ROOT"); root != "" {
		shims = filepath.Join(root, "shims")
	}
	shim := filepath.Join(shims, "python3")
	pyenv, err := exec.LookPath("pyenv")
	if _, serr := os.Stat(shim); serr != nil || err != nil {
		t.Skipf("no pyenv here (%s: %v; pyenv: %v)", shim, serr, err)
	}
	if found, _ := lookPath("python3", os.Getenv("PATH")); found != shim {
		t.Skipf("python3 on PATH is %s, not pyenv's shim", found)
	}
	out, err := exec.Command(pyenv, "which", "python3").Output()
	if err != nil {
		t.Skipf("pyenv which python3: %v (no version selected here)", err)
	}
	want := strings.TrimSpace(string(out))

	l := Read([]string{"python3", "server.py"}, builtins(t), h)
	if l.RuntimeErr != nil {
		t.Fatal(l.RuntimeErr)
	}
	rt := l.Runtime
	if rt.Exe != want || rt.Shim != shim || rt.Via != "pyenv" || l.Command[0] != want || l.Given[0] != "python3" {
		t.Errorf("Read(python3) = Command %q, Runtime %+v; want %s through pyenv's shim %s", l.Command, rt, want, shim)
	}
	version := filepath.Dir(filepath.Dir(want)) // .../versions/3.11.7
	if !slices.Equal(rt.Roots, []string{version}) || rt.Bin != filepath.Dir(want) {
		t.Errorf("Roots %q, Bin %s; want %s and its bin", rt.Roots, rt.Bin, version)
	}
}

// TestRuntimeBrokenShim: a shim whose manager names no interpreter leaves
// the command as given, and says why.
func TestRuntimeBrokenShim(t *testing.T) {
	h := testHost(t, t.TempDir())
	pyenvRoot := filepath.Join(h.Home, ".pyenv")
	write(t, filepath.Join(pyenvRoot, "shims", "python3"), "#!/bin/sh\nexit 1\n", 0o755)
	write(t, filepath.Join(pyenvRoot, "bin", "pyenv"),
		"#!/bin/sh\necho \"pyenv: version \\`3.99.0' is not installed (set by $PWD/.python-version)\" >&2\nexit 1\n", 0o755)
	h = withEnv(h, map[string]string{"PATH": filepath.Join(pyenvRoot, "shims") + ":/usr/bin:/bin"})
	h.Which = runWhich(h.WorkDir) // the real way of asking, as FromProcess's

	cmd := []string{"python3", "server.py"}
	l := Read(cmd, builtins(t), h)
	if !slices.Equal(l.Command, cmd) || l.Runtime.Exe != "" || len(l.Runtime.Roots) != 0 {
		t.Errorf("Command %q, Runtime %+v: want the command as given, nothing granted", l.Command, l.Runtime)
	}
	if l.RuntimeErr == nil || !strings.Contains(l.RuntimeErr.Error(), "3.99.0' is not installed") || !strings.Contains(l.RuntimeErr.Error(), "pyenv which python3") {
		t.Errorf("RuntimeErr = %v, want pyenv's own words and the question asked", l.RuntimeErr)
	}

	// A manager answering something other than a path is no answer.
	h.Which = func(string, ...string) (string, error) { return "system", nil }
	if l := Read(cmd, builtins(t), h); l.RuntimeErr == nil || !strings.Contains(l.RuntimeErr.Error(), `"system"`) {
		t.Errorf("RuntimeErr = %v, want the answer named", l.RuntimeErr)
	}
	h.Which = nil
	if l := Read(cmd, builtins(t), h); l.RuntimeErr == nil {
		t.Errorf("no way to ask: RuntimeErr nil")
	}
}

// TestRuntimeVirtualenv: a virtualenv's interpreter needs the virtualenv
// (its site-packages, pyvenv.cfg) and the interpreter it links to.
func TestRuntimeVirtualenv(t *testing.T) {
	base := FromProcess()
	py := "/usr/bin/python3"
	if rt, err := resolveRuntime("python3", base); err == nil && rt.Shim != "" {
		py = rt.Exe // an interpreter outside /usr, whose root is granted too
	}
	if _, err := os.Stat(py); err != nil {
		t.Skipf("no python3: %v", err)
	}
	h := testHost(t, t.TempDir())
	venv := filepath.Join(t.TempDir(), "venv")
	if out, err := exec.Command(py, "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		t.Skipf("%s -m venv: %v\n%s", py, err, out)
	}
	h = withEnv(h, map[string]string{"PATH": filepath.Join(venv, "bin") + ":/usr/bin:/bin"})
	l := Read([]string{"python", "server.py"}, builtins(t), h)
	want := []string{venv}
	if real, _ := filepath.EvalSymlinks(py); !strings.HasPrefix(real, "/usr/") {
		want = append(want, filepath.Dir(filepath.Dir(real)))
	}
	if !slices.Equal(l.Runtime.Roots, want) || l.Runtime.Bin != filepath.Join(venv, "bin") {
		t.Errorf("Runtime %+v, want roots %q", l.Runtime, want)
	}
}

// TestRuntimeProgramInBin: a program in some project's bin/ is no
// interpreter's installation: its directory is granted, not the project
// above it. Only a runtime's own files (a virtualenv's pyvenv.cfg, a node
// installation's lib/node_modules, a Python's lib/pythonX.Y) or a version
// manager make DIR/bin/prog stand for DIR.
func TestRuntimeProgramInBin(t *testing.T) {
	matches := builtins(t)
	h := testHost(t, t.TempDir())
	proj := filepath.Join(h.WorkDir, "proj")
	write(t, filepath.Join(proj, "bin", "server"), "#!/bin/sh\n", 0o755)
	write(t, filepath.Join(proj, "secrets.env"), "TOKEN=x\n", 0o600)
	l := Read([]string{filepath.Join(proj, "bin", "server")}, matches, h)
	if want := []string{filepath.Join(proj, "bin")}; !slices.Equal(l.Runtime.Roots, want) {
		t.Errorf("Roots = %q, want the program's directory %q only", l.Runtime.Roots, want)
	}
	if got := l.Runtime.What(filepath.Join(proj, "bin")); got != "the program's directory" {
		t.Errorf("What(bin) = %q", got)
	}

	for marker, file := range map[string]string{"python": "lib/python3.12/os.py", "node": "lib/node_modules/npm/package.json"} {
		inst := filepath.Join(h.WorkDir, "opt-"+marker)
		write(t, filepath.Join(inst, "bin", marker), "#!/bin/sh\n", 0o755)
		write(t, filepath.Join(inst, file), "", 0o644)
		l := Read([]string{filepath.Join(inst, "bin", marker)}, matches, h)
		if !slices.Equal(l.Runtime.Roots, []string{inst}) || l.Runtime.What(inst) != "the program's installation" {
			t.Errorf("%s installation: Roots = %q (%s), want %s", marker, l.Runtime.Roots, l.Runtime.What(inst), inst)
		}
	}
}
