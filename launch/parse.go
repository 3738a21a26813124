package launch

import (
	"strings"
)

// line is what Choose reads of a launch line: the package or script it
// runs, or why it reads nothing (refuse).
type line struct {
	pkg    string   // npm or PyPI package
	specs  []string // the package specs as given, versions kept (npx, uvx)
	script string   // node or python script, as given
	after  int      // where the script's own arguments start
	module string   // python -m module
	refuse string
}

// parseNpx reads npx's own flags up to the package. --package names it
// explicitly; -c/--call runs a shell command, so no package decides.
func parseNpx(args []string) line {
	var pkgs []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-y" || a == "--yes" || a == "-q" || a == "--quiet" || a == "--no-install" || a == "--no":
		case a == "-p" || a == "--package":
			if i+1 >= len(args) {
				return line{refuse: "npx " + a + " without a package"}
			}
			i++
			pkgs = append(pkgs, args[i])
		case strings.HasPrefix(a, "--package="):
			pkgs = append(pkgs, strings.TrimPrefix(a, "--package="))
		case a == "-c" || a == "--call" || strings.HasPrefix(a, "--call="):
			return line{refuse: "npx " + a + " runs a shell command"}
		case a == "--":
			if len(pkgs) == 0 && i+1 < len(args) {
				pkgs = append(pkgs, args[i+1])
			}
			return onePackage(pkgs)
		case strings.HasPrefix(a, "-"):
			return line{refuse: "npx flag " + a + " is not one mcpsandbox reads"}
		default:
			if len(pkgs) == 0 {
				pkgs = append(pkgs, a)
			}
			return onePackage(pkgs)
		}
	}
	if len(pkgs) == 0 {
		return line{refuse: "npx without a package"}
	}
	return onePackage(pkgs)
}

// onePackage: only a single package names the server's policy.
func onePackage(pkgs []string) line {
	l := line{}
	if len(pkgs) == 1 {
		l = npmLine(pkgs[0])
	}
	l.specs = pkgs
	return l
}

// npmLine reads a package spec: name, name@version, @scope/name@version.
// Anything else (a path, a URL, git:) names no registry package.
func npmLine(spec string) line {
	name := spec
	if at := strings.LastIndex(spec, "@"); at > 0 {
		name = spec[:at]
	}
	if !npmName(name) {
		return line{}
	}
	return line{pkg: name}
}

func npmName(s string) bool {
	rest := s
	if strings.HasPrefix(s, "@") {
		scope, pkg, ok := strings.Cut(s[1:], "/")
		if !ok || !npmPart(scope) || !npmPart(pkg) {
			return false
		}
		return true
	}
	return !strings.Contains(rest, "/") && npmPart(rest)
}

func npmPart(s string) bool {
	if s == "" || s[0] == '.' || s[0] == '_' {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}

// parseUvx reads uvx's flags up to the tool; --from names the package.
func parseUvx(args []string) line {
	from := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-q" || a == "--quiet" || a == "--offline" || a == "--isolated":
		case a == "--from" || a == "--python" || a == "-p" || a == "--with":
			if i+1 >= len(args) {
				return line{refuse: "uvx " + a + " without a value"}
			}
			i++
			if a == "--from" {
				from = args[i]
			}
		case strings.HasPrefix(a, "--from="):
			from = strings.TrimPrefix(a, "--from=")
		case strings.HasPrefix(a, "-"):
			return line{refuse: "uvx flag " + a + " is not one mcpsandbox reads"}
		default:
			if from == "" {
				from = a
			}
			l := pypiLine(from)
			l.specs = []string{from}
			return l
		}
	}
	return line{refuse: "uvx without a tool"}
}

// pypiLine reads a requirement: name, name==1.0, name[extra]>=1, name@1.
func pypiLine(req string) line {
	end := strings.IndexAny(req, "=<>!~[@; ")
	if end >= 0 {
		req = req[:end]
	}
	for _, c := range req {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return line{}
		}
	}
	if req == "" {
		return line{}
	}
	return line{pkg: req}
}

// nodeValueFlags take the next argument as their value.
var nodeValueFlags = map[string]bool{"-r": true, "--require": true, "--import": true, "--loader": true,
	"--experimental-loader": true, "--env-file": true, "--conditions": true, "-C": true, "--title": true, "--input-type": true}

// parseNode finds node's script; -e and -p evaluate code instead.
func parseNode(args []string) line {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-e" || a == "--eval" || a == "-p" || a == "--print" || a == "-":
			return line{}
		case nodeValueFlags[a]:
			i++
		case a == "--":
			if i+1 < len(args) {
				return line{script: args[i+1], after: i + 2}
			}
			return line{}
		case strings.HasPrefix(a, "-"):
		default:
			return line{script: a, after: i + 1}
		}
	}
	return line{}
}

// parsePython finds python's script or -m module; -c runs code.
func parsePython(args []string) line {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-c" || a == "-":
			return line{}
		case a == "-m":
			if i+1 < len(args) {
				return line{module: args[i+1], pkg: strings.SplitN(args[i+1], ".", 2)[0]}
			}
			return line{}
		case strings.HasPrefix(a, "-m"):
			mod := strings.TrimPrefix(a, "-m")
			return line{module: mod, pkg: strings.SplitN(mod, ".", 2)[0]}
		case a == "-X" || a == "-W" || a == "--check-hash-based-pycs":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return line{script: a, after: i + 1}
		}
	}
	return line{}
}
