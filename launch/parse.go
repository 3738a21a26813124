package launch

import (
	"strings"
)

// line is what Choose reads of a launch line: the package or script it
// runs, or why it reads nothing (refuse).
type line struct {
	pkg    string   // npm or PyPI package
	specs  []string // the package specs as given, versions kept (npx, uvx)
	specAt []int    // npx: where each spec is in the line (its index; a --package= argument's value)
	with   []string // uvx --with: more packages in the tool's environment
	python string   // uvx --python
	script string   // node or python script, as given
	module string   // python -m module
	refuse string
	// rest is where the server's own arguments begin among the arguments
	// read: after the launcher's or interpreter's flags and its operand.
	rest int
}

// parseNpx reads npx's own flags up to the package. --package names it
// explicitly; -c/--call runs a shell command, so no package decides.
func parseNpx(args []string) line {
	var pkgs []string
	var at []int // index in the launch line, the program first
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-y" || a == "--yes" || a == "-q" || a == "--quiet" || a == "--no-install" || a == "--no":
		case a == "-p" || a == "--package":
			if i+1 >= len(args) {
				return line{refuse: "npx " + a + " without a package"}
			}
			i++
			pkgs, at = append(pkgs, args[i]), append(at, i+1)
		case strings.HasPrefix(a, "--package="):
			pkgs, at = append(pkgs, strings.TrimPrefix(a, "--package=")), append(at, i+1)
		case a == "-c" || a == "--call" || strings.HasPrefix(a, "--call="):
			return line{refuse: "npx " + a + " runs a shell command"}
		case a == "--":
			if i+1 >= len(args) {
				return line{refuse: "npx -- without a command"}
			}
			if len(pkgs) == 0 {
				pkgs, at = append(pkgs, args[i+1]), append(at, i+2)
			}
			return onePackage(pkgs, at, i+2)
		case strings.HasPrefix(a, "-"):
			return line{refuse: "npx flag " + a + " is not one mcpsandbox reads"}
		default:
			if len(pkgs) == 0 {
				pkgs, at = append(pkgs, a), append(at, i+1)
			}
			return onePackage(pkgs, at, i+1)
		}
	}
	return line{refuse: "npx without a package"}
}

// onePackage: only a single package names the server's policy; the others
// run more code than that policy's package.
func onePackage(pkgs []string, at []int, rest int) line {
	l := line{}
	if len(pkgs) == 1 {
		l = npmLine(pkgs[0])
	}
	l.specs, l.specAt, l.rest = pkgs, at, rest
	return l
}

// npmLine reads a registry package spec: name, name@version,
// @scope/name@version. Anything else names no registry package: a path, a
// URL, git:, and an alias (name@npm:other), which installs other as name.
func npmLine(spec string) line {
	name, _, ok := npmSpec(spec)
	if !ok {
		return line{}
	}
	return line{pkg: name}
}

// npmSpec splits a registry package spec into its name and the version,
// tag or range it asks for ("" for none); ok is false for any other spec.
func npmSpec(spec string) (name, wanted string, ok bool) {
	name = spec
	start := 0
	if strings.HasPrefix(spec, "@") {
		start = 1 // the scope's @
	}
	if at := strings.Index(spec[start:], "@"); at >= 0 {
		name, wanted = spec[:start+at], spec[start+at+1:]
	}
	if !npmName(name) || strings.ContainsAny(wanted, ":/@") {
		return "", "", false
	}
	return name, wanted, true
}

func npmName(s string) bool {
	if strings.HasPrefix(s, "@") {
		scope, pkg, ok := strings.Cut(s[1:], "/")
		return ok && npmPart(scope) && npmPart(pkg)
	}
	return !strings.Contains(s, "/") && npmPart(s)
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
// --with adds packages to the tool's environment, so the tool's own
// policy no longer decides.
func parseUvx(args []string) line {
	var l line
	from := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(a, "=")
		switch {
		case a == "-q" || a == "--quiet" || a == "--offline" || a == "--isolated":
		case name == "--from" || name == "--python" || name == "-p" || name == "--with":
			if !hasValue {
				if i+1 >= len(args) {
					return line{refuse: "uvx " + a + " without a value"}
				}
				i++
				value = args[i]
			}
			switch name {
			case "--from":
				from = value
			case "--with":
				l.with = append(l.with, value)
			default:
				l.python = value
			}
		case strings.HasPrefix(a, "-"):
			return line{refuse: "uvx flag " + a + " is not one mcpsandbox reads"}
		default:
			if from == "" {
				from = a
			}
			if len(l.with) == 0 {
				l.pkg = pypiLine(from).pkg
			}
			l.specs, l.rest = []string{from}, i+1
			return l
		}
	}
	return line{refuse: "uvx without a tool"}
}

// pypiLine reads a registry requirement: name, name==1.0, name[extra]>=1,
// name@1. A direct reference (name @ https://..., a path, git+...) names
// no registry package.
func pypiLine(req string) line {
	name, rest := req, ""
	if end := strings.IndexAny(req, "=<>!~[@; "); end >= 0 {
		name, rest = req[:end], req[end:]
	}
	if name == "" || strings.ContainsAny(rest, ":/") {
		return line{}
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return line{}
		}
	}
	return line{pkg: name}
}

// nodeValueFlags take the next argument as their value.
var nodeValueFlags = map[string]bool{"-r": true, "--require": true, "--import": true, "--loader": true,
	"--experimental-loader": true, "--env-file": true, "--conditions": true, "-C": true, "--title": true, "--input-type": true}

// parseNode finds node's script; -e and -p evaluate code instead.
func parseNode(args []string) line {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-e" || a == "--eval" || a == "-p" || a == "--print":
			return line{rest: min(i+2, len(args))}
		case a == "-" || strings.HasPrefix(a, "--eval=") || strings.HasPrefix(a, "--print="):
			return line{rest: i + 1}
		case nodeValueFlags[a]:
			i++
		case a == "--":
			if i+1 < len(args) {
				return line{script: args[i+1], rest: i + 2}
			}
			return line{rest: len(args)}
		case strings.HasPrefix(a, "-"):
		default:
			return line{script: a, rest: i + 1}
		}
	}
	return line{rest: len(args)}
}

// pythonValueFlags are python's options that take a value: c (code), m
// (module), W and X; the value is the rest of the argument or the next.
const pythonValueFlags = "cmWX"

// parsePython finds python's script or -m module; -c runs code. Short
// options combine as python reads them: -Im mod, -uc code.
func parsePython(args []string) line {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-":
			return line{rest: i + 1}
		case a == "--":
			if i+1 < len(args) {
				return line{script: args[i+1], rest: i + 2}
			}
			return line{rest: len(args)}
		case a == "--check-hash-based-pycs":
			i++
		case strings.HasPrefix(a, "--"):
		case strings.HasPrefix(a, "-"):
			flag, value, ok := pythonValueFlag(a)
			if !ok {
				continue
			}
			next := i + 1
			if value == "" {
				if i+1 >= len(args) {
					return line{rest: len(args)}
				}
				value, next = args[i+1], i+2
			}
			switch flag {
			case 'c':
				return line{rest: next}
			case 'm':
				return line{module: value, pkg: strings.SplitN(value, ".", 2)[0], rest: next}
			}
			i = next - 1
		default:
			return line{script: a, rest: i + 1}
		}
	}
	return line{rest: len(args)}
}

// pythonValueFlag finds the option that takes a value among combined short
// options (-uc: u, then c) and what follows it in the same argument.
func pythonValueFlag(a string) (flag byte, value string, ok bool) {
	for j := 1; j < len(a); j++ {
		if strings.IndexByte(pythonValueFlags, a[j]) >= 0 {
			return a[j], a[j+1:], true
		}
	}
	return 0, "", false
}

// Script is the script file a node or python command line runs, as
// given ("" when it runs none: a package, a module, code inline): the
// sandbox keeps it read-only as it keeps the program.
func Script(cmd []string) string {
	if len(cmd) == 0 {
		return ""
	}
	_, ln := parseLine(cmd)
	if ln.script == "-" {
		return ""
	}
	return ln.script
}
