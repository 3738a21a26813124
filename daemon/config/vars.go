package config

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The variables of VS Code's and Cursor's files, as far as the daemon can
// give them the values those hosts would:
//
//	${workspaceFolder}          the folder of a DIR/.vscode/ or DIR/.cursor/ file: DIR
//	${workspaceFolderBasename}  its last element
//	${userHome}                 the daemon's home directory
//	${env:NAME}                 NAME of the daemon's environment, read at Load
//	${pathSeparator}, ${/}      /
//
// ${input:ID} (VS Code asks the user for it) and anything else are
// refused: the daemon has nobody to ask, and a value it cannot give must
// not be passed on as the literal text.

// environ is the daemon's environment, as the variables read it.
type environ struct {
	home   string
	lookup func(string) (string, bool)
}

// workspaceOf is the workspace folder of a file in dir: the parent of a
// .vscode or .cursor directory, but the home directory's (where Cursor
// keeps its global file) is no workspace.
func workspaceOf(dir, home string) string {
	base := filepath.Base(dir)
	if base != ".vscode" && base != ".cursor" {
		return ""
	}
	parent := filepath.Dir(dir)
	if home != "" && filepath.Clean(home) == parent {
		return ""
	}
	return parent
}

// expand replaces the variables in s, the string at n.
func (r *reader) expand(n ast.Node, s string) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", r.fail(n, fmt.Sprintf("%q has ${ without a closing }", s), "close it with }")
		}
		val, err := r.variable(n, s[i+2:i+end])
		if err != nil {
			return "", err
		}
		b.WriteString(val)
		s = s[i+end+1:]
	}
}

func (r *reader) variable(n ast.Node, name string) (string, error) {
	switch name {
	case "workspaceFolder", "workspaceFolderBasename":
		if r.workspace == "" {
			return "", r.fail(n, "${"+name+"} is the folder of the workspace a .vscode/mcp.json or .cursor/mcp.json belongs to, and "+r.file+" is in none",
				"write the path")
		}
		if name == "workspaceFolderBasename" {
			return filepath.Base(r.workspace), nil
		}
		return r.workspace, nil
	case "userHome":
		if r.env.home == "" {
			return "", r.fail(n, "${userHome}: the daemon has no home directory (HOME is not set)", "write the path, or set HOME for the daemon")
		}
		return r.env.home, nil
	case "pathSeparator", "/":
		return "/", nil
	}
	if v, ok := strings.CutPrefix(name, "env:"); ok {
		if !validEnvName(v) {
			return "", r.fail(n, "${"+name+"}: "+fmt.Sprintf("%q", v)+" is no variable name", "use letters, digits and _")
		}
		val, set := r.env.lookup(v)
		if !set {
			return "", r.fail(n, "${env:"+v+"}: "+v+" is not set in the daemon's environment",
				"set it where the daemon is started (e.g. Environment= in its unit), or write the value")
		}
		return val, nil
	}
	if id, ok := strings.CutPrefix(name, "input:"); ok {
		return "", r.fail(n, "${input:"+id+"}: VS Code asks for this value when it starts the server; the daemon has nobody to ask",
			"write the value, or \"${env:NAME}\" to take it from the daemon's environment")
	}
	fix := "the daemon knows ${workspaceFolder}, ${workspaceFolderBasename}, ${userHome}, ${env:NAME}, ${pathSeparator} and ${/}"
	if validEnvName(name) {
		fix = "for the daemon's environment's " + name + " write ${env:" + name + "}; " + fix
	}
	return "", r.fail(n, "unknown variable ${"+name+"}", fix)
}

// path is the path s at n with its variables expanded and ~/ read as the
// daemon's home, made absolute against dir.
func (r *reader) path(n ast.Node, s, dir string) (string, error) {
	p, err := r.expand(n, s)
	if err != nil {
		return "", err
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		if r.env.home == "" {
			return "", r.fail(n, "~: the daemon has no home directory (HOME is not set)", "write the path")
		}
		p = r.env.home + p[1:]
	}
	if p == "" {
		return "", r.fail(n, "the path is empty", "give a path, or delete the item")
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p), nil
}

// validEnvName: letters, digits and _, not starting with a digit (as
// package policy checks --env).
func validEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// placed is fe at n.
func placed(file string, n ast.Node, fe *field.Error) error {
	return &policy.FileError{Pos: posOf(file, n), Err: fe}
}
