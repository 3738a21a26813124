package launch

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/pathrule"
)

// Runtime is the program a launch line starts, as found on this host.
type Runtime struct {
	Exe   string   // what runs: PATH searched, a version manager's shim resolved
	Shim  string   // the shim Exe was found through, "" if none
	Via   string   // the version manager that resolved it
	Roots []string // installations to grant read-only: outside /usr only
	Bin   string   // Exe's directory, first on the server's PATH ("" under /usr)
	what  map[string]string
}

// What says what a root of Roots is, for a person.
func (rt Runtime) What(root string) string { return rt.what[root] }

// shimDirs are where version managers put shims, relative to their data
// directory, and how to ask each where a shim leads.
type manager struct {
	name    string
	dataEnv string // overrides the data directory
	data    string // relative to the home directory
	shims   string // relative to the data directory
	which   func(data, prog string) (string, []string)
}

var managers = []manager{
	{"pyenv", "PYENV_ROOT", ".pyenv", "shims", func(data, prog string) (string, []string) {
		return filepath.Join(data, "bin", "pyenv"), []string{"which", prog}
	}},
	{"asdf", "ASDF_DATA_DIR", ".asdf", "shims", func(_, prog string) (string, []string) { return "asdf", []string{"which", prog} }},
	{"mise", "MISE_DATA_DIR", ".local/share/mise", "shims", func(_, prog string) (string, []string) { return "mise", []string{"which", prog} }},
	{"volta", "VOLTA_HOME", ".volta", "bin", func(_, prog string) (string, []string) { return "volta", []string{"which", prog} }},
}

// resolveRuntime finds prog as the server's start would, on the host's
// PATH, and sees through version-manager shims, which run the manager
// (and read its files under the home directory) to pick the real
// interpreter: inside, only the interpreter it picks is granted.
func resolveRuntime(prog string, h Host) (Runtime, error) {
	var rt Runtime
	found := prog
	if !strings.Contains(prog, "/") {
		p, err := lookPath(prog, h.env("PATH"))
		if err != nil {
			return rt, err
		}
		found = p
	} else {
		found = absPath(h.WorkDir, prog)
	}
	rt.Exe = found
	for _, m := range managers {
		data := h.env(m.dataEnv)
		if data == "" && h.Home != "" {
			data = filepath.Join(h.Home, m.data)
		}
		if data == "" || filepath.Dir(found) != filepath.Join(data, m.shims) {
			continue
		}
		exe, args := m.which(data, filepath.Base(found))
		if h.Which == nil {
			return rt, fmt.Errorf("%s is a %s shim, and nothing here can ask %s where it leads", found, m.name, m.name)
		}
		real, err := h.Which(exe, args...)
		if err == nil && !filepath.IsAbs(real) {
			err = fmt.Errorf("it answered %q, not an absolute path", real)
		}
		if err != nil {
			return rt, fmt.Errorf("%s is a %s shim, and `%s %s` named no interpreter (%v): install the version it wants, or give the interpreter's own path",
				found, m.name, m.name, strings.Join(args, " "), err)
		}
		rt.Shim, rt.Via, rt.Exe = found, m.name, real
		break
	}
	rt.Roots, rt.what = installRoots(rt.Exe, h.Home, rt.Via != "")
	if len(rt.Roots) > 0 {
		rt.Bin = filepath.Dir(rt.Exe)
		if real, err := filepath.EvalSymlinks(rt.Bin); err == nil {
			rt.Bin = real // as granted
		}
	}
	return rt, nil
}

// installRoots are the installations exe needs outside /usr (which is
// always visible), and what each is: for DIR/bin/prog, DIR when a version
// manager found exe (managed) or DIR is a runtime's installation (a node
// or Python one holds its libraries beside bin), else the program's own
// directory, since a bin/ of some project says nothing of what is above
// it; for a link (a virtualenv's interpreter, nvm's npx, ~/.local/bin/x)
// the installation it leads to as well. Never
// the home directory itself or anything above it, nor ~/.local, the
// user's catch-all prefix (its share and state hold every program's data,
// other servers' state directories too). Paths are real ones: the sandbox
// follows no symlink in a grant.
func installRoots(exe, home string, managed bool) ([]string, map[string]string) {
	homes := []string{home}
	if real, err := filepath.EvalSymlinks(home); err == nil && home != "" && real != home {
		homes = append(homes, real)
	}
	tooBroad := func(d string) bool {
		return slices.ContainsFunc(homes, func(h string) bool {
			return isHomeOrAbove(d, h) || h != "" && d == filepath.Join(h, ".local")
		})
	}
	var roots []string
	what := map[string]string{}
	add := func(path string) {
		dir := filepath.Dir(path)
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
		if pathrule.Within(dir, "/usr") {
			return
		}
		root, kind := dir, "the program's directory"
		if up := filepath.Dir(dir); filepath.Base(dir) == "bin" && !tooBroad(up) && (managed || isInstallation(up)) {
			root, kind = up, "the program's installation"
		}
		if tooBroad(root) {
			root, kind = filepath.Join(dir, filepath.Base(path)), "the program itself"
		}
		for _, r := range roots {
			if pathrule.Within(root, r) {
				return
			}
		}
		roots = append(roots, root)
		what[root] = kind
	}
	add(exe)
	if real, err := filepath.EvalSymlinks(exe); err == nil && real != exe {
		add(real)
	}
	return roots, what
}

// isInstallation: dir is what a runtime installs, by the runtime's own
// files: a virtualenv (pyvenv.cfg), a Python (lib/pythonX.Y), a node
// (lib/node_modules, where its npm is).
func isInstallation(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "pyvenv.cfg")); err == nil {
		return true
	}
	if st, err := os.Stat(filepath.Join(dir, "lib", "node_modules")); err == nil && st.IsDir() {
		return true
	}
	libs, _ := os.ReadDir(filepath.Join(dir, "lib"))
	return slices.ContainsFunc(libs, func(e os.DirEntry) bool { return e.IsDir() && strings.HasPrefix(e.Name(), "python") })
}

// lookPath is exec.LookPath over a given PATH, the server's start's own.
func lookPath(prog, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, prog)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: %w", prog, exec.ErrNotFound)
}
