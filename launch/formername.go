package launch

import (
	"path/filepath"
	"strings"
)

// formerStateName is the state directory's name mcpsandbox gave a server
// before names told packages apart: the package without its scope
// (@playwright/mcp and @stripe/mcp were both mcp), the module, the
// script's directory, the program. Only for finding state to move
// (former.go).
func formerStateName(cmd []string, ln line) string {
	name := filepath.Base(cmd[0])
	switch {
	case ln.module != "":
		name = ln.module
	case ln.script != "":
		name = scriptName(ln.script)
	case ln.pkg != "":
		name = formerPackageName(ln.pkg)
	case len(ln.specs) > 0:
		name = formerPackageName(ln.specs[0])
	}
	clean := strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' {
			return c
		}
		return '_'
	}, name)
	if clean == "" || strings.Trim(clean, ".") == "" || clean == "ids" {
		clean = "server-" + clean
	}
	return clean
}

// formerPackageName dropped a package's scope and version (@s/x@1 → x),
// and a URL's or path's directories.
func formerPackageName(pkg string) string {
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
