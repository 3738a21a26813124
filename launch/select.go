package launch

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Choice is the built-in policy a launch line selects, and why.
type Choice struct {
	Policy string
	Why    string
}

// fallback is the policy of every launch line no built-in names.
const fallback = "default"

// Choose picks the built-in for cmd from the built-ins' match sections.
// It reads only the program's base name and the operand that names the
// package or script, parsed as the program would: never a pattern in
// free-form arguments, and a flag it does not know (npx -c, sh -c) leaves
// the strictest policy, default.
func Choose(cmd []string, matches []policy.Match, h Host) Choice {
	if len(cmd) == 0 {
		return Choice{fallback, "no command"}
	}
	prog, l := parseLine(cmd)
	return choose(cmd, prog, l, matches, h)
}

// parseLine reads cmd as its program would: the program's family, and
// what it names (package, script, its own arguments' start).
func parseLine(cmd []string) (string, line) {
	prog, args := family(filepath.Base(cmd[0])), cmd[1:]
	switch prog {
	case "npx":
		return prog, parseNpx(args)
	case "uvx":
		return prog, parseUvx(args)
	case "node":
		return prog, parseNode(args)
	case "python3":
		return prog, parsePython(args)
	}
	return prog, line{}
}

// choose is Choose of a line parseLine read.
func choose(cmd []string, prog string, l line, matches []policy.Match, h Host) Choice {
	if prog == "node" && l.script != "" {
		l.pkg = npmPackageOf(absPath(h.WorkDir, l.script))
	}
	if l.refuse != "" {
		return Choice{fallback, l.refuse + ": the strictest policy"}
	}
	if l.pkg != "" {
		for _, m := range matches {
			if prog == "npx" || prog == "node" {
				if slices.Contains(m.NPM, l.pkg) {
					return Choice{m.Policy, filepath.Base(cmd[0]) + " runs the npm package " + l.pkg + ", which the built-in " + m.Policy + " is for"}
				}
			} else if slices.ContainsFunc(m.PyPI, func(p string) bool { return pypiName(p) == pypiName(l.pkg) }) {
				return Choice{m.Policy, filepath.Base(cmd[0]) + " runs the Python package " + l.pkg + ", which the built-in " + m.Policy + " is for"}
			}
		}
	}
	for _, m := range matches {
		if slices.Contains(m.Programs, prog) {
			why := "the program is " + filepath.Base(cmd[0])
			if l.pkg != "" {
				why += " (package " + l.pkg + ", which no built-in names)"
			}
			return Choice{m.Policy, why}
		}
	}
	return Choice{fallback, "no built-in policy is for the program " + filepath.Base(cmd[0])}
}

// family names an interpreter by its family: nodejs is node, python and
// python3.12 are python3.
func family(base string) string {
	switch {
	case base == "nodejs":
		return "node"
	case base == "python" || strings.HasPrefix(base, "python3"):
		if rest := strings.TrimPrefix(base, "python3"); rest == "" || rest == base || validMinor(rest) {
			return "python3"
		}
	}
	return base
}

func validMinor(s string) bool {
	if len(s) < 2 || s[0] != '.' {
		return false
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// pypiName normalises a PyPI name as PEP 503 does (and module names,
// which spell - as _).
func pypiName(s string) string {
	return strings.ToLower(strings.NewReplacer("_", "-", ".", "-").Replace(s))
}
