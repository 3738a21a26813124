package launch

import (
	"path/filepath"
	"strings"
)

// serverName is what people know a server by, from what parseLine read of
// cmd: the package of `npx -y @scope/server-x@1.2` (server-x), the module
// of `python3 -m mcp_server_git`, the package directory of
// `node .../server-x/dist/index.js`, else the program's name. It names the
// server in logs, its cgroup and its state directory.
func serverName(cmd []string, ln line) string {
	if len(cmd) == 0 {
		return "server"
	}
	switch {
	case ln.module != "":
		return ln.module
	case ln.script != "":
		return scriptName(ln.script)
	case ln.pkg != "":
		return packageName(ln.pkg)
	case len(ln.specs) > 0:
		return packageName(ln.specs[0])
	}
	return filepath.Base(cmd[0])
}

// packageName drops a registry package's scope and version (@s/x@1 → x),
// and a URL's or path's directories.
func packageName(pkg string) string {
	if i := strings.LastIndex(pkg, "/"); i >= 0 {
		pkg = pkg[i+1:]
	}
	if i := strings.Index(pkg, "@"); i > 0 {
		pkg = pkg[:i]
	}
	if pkg == "" {
		return "server"
	}
	return pkg
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
