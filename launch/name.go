package launch

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/pathrule"
)

// identity is who a server is, read from its launch line: the name people
// know it by (logs, its cgroup, audit lines), the name of its state
// directory, and which part of the line decided both. Two lines that run
// different code get different state directories, so that one cannot
// rewrite the packages the other runs; the same package at another
// version, or with other arguments, keeps its state (and prepare's cache,
// which prepare fills from the same line).
//
// A state name is KIND+REST: npm+@scope+name (npm+a,b for several
// packages), pypi+name, pymod+module, or KIND+LABEL+HASH where a label
// alone does not tell apart (scripts, programs, specs of no registry).
// Each kind's REST is one per identity, and the kind comes first, so no
// two identities share one; and none is a name mcpsandbox gave before
// (formername.go: never a +), so a former state directory is only ever
// moved, never taken over by another server.
type identity struct {
	name  string
	state string // a single path element; one per identity (stateKind)
	why   string
}

// identify reads cmd's identity from what parseLine read of it (fam, ln);
// rt is the program as found, project the script's (${PROJECT}).
func identify(cmd []string, fam string, ln line, h Host, rt Runtime, project string) identity {
	if len(cmd) == 0 {
		return identity{name: "server", state: "server", why: "no command"}
	}
	switch fam {
	case "npx":
		return npxIdentity(cmd, ln)
	case "uvx":
		return uvxIdentity(cmd, ln)
	case "node", "python3":
		return interpreterIdentity(cmd, fam, ln, h, project)
	}
	exe := rt.Exe
	if exe == "" {
		exe = cmd[0]
		if strings.Contains(exe, "/") {
			exe = absPath(h.WorkDir, exe)
		}
	}
	name := filepath.Base(cmd[0])
	return identity{name: name, state: tagged("bin", name, exe), why: "the program " + exe}
}

// npxIdentity: the registry packages npx installs, by name (scope kept,
// version left out); a spec of no registry package (path, URL, git:,
// alias) by the spec itself.
func npxIdentity(cmd []string, ln line) identity {
	if len(ln.specs) == 0 {
		return wholeLine(cmd, "npx", "npx names no package ("+ln.refuse+")")
	}
	var names []string
	for _, s := range ln.specs {
		pkg := npmLine(s).pkg
		if pkg == "" {
			label := lastElement(ln.specs[0])
			return identity{name: label, state: tagged("npx", label, strings.Join(ln.specs, "\x00")),
				why: "npx's package spec " + strings.Join(ln.specs, " ") + " (not a registry package: the spec itself)"}
		}
		names = append(names, pkg)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	state := make([]string, len(names))
	for i, n := range names {
		state[i] = npmStateName(n)
	}
	id := identity{name: strings.Join(names, "+"), state: "npm+" + strings.Join(state, ","),
		why: "the npm package " + strings.Join(names, ", ") + " of npx (its version and the server's arguments do not count)"}
	if len(id.state) > maxStateName {
		id.state = tagged("npx", names[0], strings.Join(names, "\x00"))
	}
	return id
}

// npmStateName is an npm package's part of a state name: the name, with
// a scoped one's / made + (@scope+name: npm names hold no +, and only a
// scoped one begins with @).
func npmStateName(pkg string) string {
	return strings.Replace(pkg, "/", "+", 1)
}

// uvxIdentity: the tool's PyPI package, normalized as PyPI compares names
// (mcp_server_git is mcp-server-git); a direct reference by itself.
func uvxIdentity(cmd []string, ln line) identity {
	if len(ln.specs) == 0 {
		return wholeLine(cmd, "uvx", "uvx names no tool ("+ln.refuse+")")
	}
	spec := ln.specs[0]
	pkg := pypiLine(spec).pkg
	if pkg == "" {
		label := lastElement(spec)
		return identity{name: label, state: tagged("uvx", label, spec), why: "uvx's tool " + spec + " (not a registry package: the reference itself)"}
	}
	return identity{name: pkg, state: "pypi+" + pypiNormal(pkg), why: "the PyPI package " + pkg + " of uvx (its version and the server's arguments do not count)"}
}

// interpreterIdentity: python's -m module by its name; a script by its
// project (two projects' dist/index.js are two servers); code given
// inline (-e, -c) by the whole line.
func interpreterIdentity(cmd []string, fam string, ln line, h Host, project string) identity {
	kind := map[string]string{"node": "node", "python3": "python"}[fam]
	switch {
	case ln.module != "":
		if pythonModule(ln.module) {
			return identity{name: ln.module, state: "pymod+" + ln.module, why: "the Python module " + ln.module + " (python -m)"}
		}
		return identity{name: ln.module, state: tagged("pymod", ln.module, ln.module), why: "the Python module " + ln.module + " (python -m)"}
	case ln.script != "":
		script := absPath(h.WorkDir, ln.script)
		name, pkg := scriptName(ln.script), ""
		if fam == "node" {
			// Packages installed side by side share a project (the
			// node_modules' directory): the package tells them apart.
			if pkg = npmPackageOf(script); pkg != "" {
				name = pkg
			}
		}
		if project == "" {
			return identity{name: name, state: tagged(kind, name, script), why: "the script " + script}
		}
		why := "the project " + project + " of the script " + ln.script
		if pkg != "" {
			why = "the npm package " + pkg + " in " + why
		}
		return identity{name: name, state: tagged(kind, name, project+"\x00"+pkg), why: why}
	}
	return wholeLine(cmd, kind, filepath.Base(cmd[0])+" runs code given on it")
}

// wholeLine: a line that names no package or script is known by all of it.
func wholeLine(cmd []string, kind, why string) identity {
	name := filepath.Base(cmd[0])
	return identity{name: name, state: tagged(kind, name, strings.Join(cmd[1:], "\x00")), why: "the whole line (" + why + ")"}
}

// maxStateName keeps a state name well within a path element's 255 bytes.
const maxStateName = 200

// tagged is the state name kind+label+hash: label for people, hash of
// (kind, key) for telling apart what label alone does not. It is never an
// npm state name (those hold a + only after a leading @ scope) nor
// another kind's (the kind comes first).
func tagged(kind, label, key string) string {
	sum := sha256.Sum256([]byte(kind + "\x00" + key))
	return kind + "+" + pathrule.Element(label) + "+" + hex.EncodeToString(sum[:8])
}

// pypiNormal is a PyPI name as PyPI compares names (PEP 503).
func pypiNormal(name string) string {
	var b strings.Builder
	sep := false
	for _, c := range strings.ToLower(name) {
		if c == '-' || c == '_' || c == '.' {
			sep = true
			continue
		}
		if sep && b.Len() > 0 {
			b.WriteByte('-')
		}
		sep = false
		b.WriteRune(c)
	}
	return b.String()
}

// pythonModule: a dotted name of identifiers, which is its own state name.
func pythonModule(m string) bool {
	for _, part := range strings.Split(m, ".") {
		if part == "" || part[0] >= '0' && part[0] <= '9' {
			return false
		}
		for _, c := range part {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
				return false
			}
		}
	}
	return len(m) <= maxStateName
}

// lastElement is a URL's or path's last element, a spec's version left
// out (github:someone/mcp-thing → mcp-thing).
func lastElement(spec string) string {
	if i := strings.LastIndex(strings.TrimRight(spec, "/"), "/"); i >= 0 {
		spec = strings.TrimRight(spec, "/")[i+1:]
	}
	if i := strings.IndexAny(spec, "@#="); i > 0 {
		spec = spec[:i]
	}
	if spec == "" {
		return "server"
	}
	return spec
}

// genericScripts say nothing of the server; their directory does.
var genericScripts = map[string]bool{"index": true, "main": true, "server": true, "cli": true, "__main__": true, "run": true}

// buildDirs hold a package's built entry point; the package is above them.
var buildDirs = map[string]bool{"dist": true, "build": true, "lib": true, "src": true, "bin": true, "out": true}

// scriptName names a script by its file, or by the package directory above
// a generic entry point such as dist/index.js.
func scriptName(path string) string {
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	dir := filepath.Dir(path)
	for genericScripts[name] && dir != "." && dir != "/" {
		name, dir = filepath.Base(dir), filepath.Dir(dir)
		if buildDirs[name] {
			name = "index" // keep climbing: the package is above its build directory
		}
	}
	return name
}
