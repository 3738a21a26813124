package policy

import (
	"path/filepath"
	"strings"
)

// launchers run a package named by their first argument.
var launchers = map[string]bool{"npx": true, "bunx": true, "uvx": true, "pipx": true}

// interpreters run a script named by their first argument.
var interpreters = map[string]bool{"node": true, "nodejs": true, "bun": true, "deno": true, "python": true, "python3": true}

// genericScripts say nothing of the server; their directory does.
var genericScripts = map[string]bool{"index": true, "main": true, "server": true, "cli": true, "__main__": true, "run": true}

// buildDirs hold a package's built entry point; the package is above them.
var buildDirs = map[string]bool{"dist": true, "build": true, "lib": true, "src": true, "bin": true, "out": true}

// ServerName is what people know a server by, from its command line: the
// package of `npx -y @scope/server-x@1.2` (server-x), the module of
// `python3 -m mcp_server_git`, the package of `node .../server-x/dist/index.js`,
// else the program's name. It names the server in logs and its scope.
func ServerName(command []string) string {
	if len(command) == 0 {
		return "server"
	}
	prog := filepath.Base(command[0])
	switch {
	case launchers[prog]:
		if arg := firstOperand(command[1:]); arg != "" {
			return packageName(arg)
		}
	case interpreters[prog] || strings.HasPrefix(prog, "python3."):
		for i, a := range command[1:] {
			if a == "-m" && i+2 < len(command) {
				return command[i+2]
			}
		}
		if arg := firstOperand(command[1:]); arg != "" {
			return scriptName(arg)
		}
	}
	return prog
}

// firstOperand is the first argument that is not an option.
func firstOperand(args []string) string {
	for _, a := range args {
		if a != "" && !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// packageName drops a registry package's scope and version: @s/x@1 → x.
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
