package launch

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Former is the state directory an earlier mcpsandbox gave this server
// under a name other servers could share (formername.go), when this
// server has none of its own yet: Move says it is unambiguously this
// server's, to be moved to StateDir at its first start; otherwise it is
// left where it is. Why says which, for the log and policy explain.
type Former struct {
	Dir  string // "" when there is nothing to decide
	Move bool
	Why  string
}

// FormerState looks at the former state directory of l's server (it
// only reads): what its package caches name decides whether it is this
// server's. A directory with no package cache could be any server's of
// that name (a script's directory, a program), so it stays.
func (l Launch) FormerState() Former {
	if l.formerDir == "" || l.formerDir == l.StateDir || l.StateDir == "" {
		return Former{}
	}
	if _, err := os.Lstat(l.StateDir); err == nil {
		return Former{} // the server has its own already
	}
	if st, err := os.Lstat(l.formerDir); err != nil || !st.IsDir() {
		return Former{}
	}
	f := Former{Dir: l.formerDir}
	npm := npxPackagesIn(l.formerDir)
	_, uvErr := os.Lstat(filepath.Join(l.formerDir, "uv"))
	hasUV := uvErr == nil
	var others []string
	mine := l.packages()
	switch {
	case len(mine) == 0:
		f.Why = "nothing in it says whose it is, and servers of other launch lines had that name too"
		return f
	case l.family == "npx":
		for _, p := range npm {
			if !slices.Contains(mine, p) {
				others = append(others, p)
			}
		}
		if hasUV {
			others = append(others, "a uvx tool (its uv cache)")
		}
		f.Move = len(npm) > 0 && len(others) == 0
	case l.family == "uvx":
		others = npm
		f.Move = hasUV && len(npm) == 0 && uvHolds(filepath.Join(l.formerDir, "uv"), mine[0])
	}
	switch {
	case f.Move:
		f.Why = "its package cache holds " + strings.Join(mine, ", ") + " and nothing else's"
	case len(others) > 0:
		f.Why = "its npm cache holds packages of other servers too (" + strings.Join(others, ", ") + "), which shared it under that name; each now has its own, to prepare again"
	default:
		f.Why = "its package cache does not name " + strings.Join(mine, ", ")
	}
	return f
}

// packages are the registry packages l's npx or uvx installs; none for
// any other line.
func (l Launch) packages() []string {
	var pkgs []string
	for _, s := range l.line.specs {
		var p string
		switch l.family {
		case "npx":
			p = npmLine(s).pkg
		case "uvx":
			p = pypiLine(s).pkg
		}
		if p == "" {
			return nil
		}
		pkgs = append(pkgs, p)
	}
	if l.family == "uvx" && len(pkgs) > 0 {
		return pkgs[:1]
	}
	return pkgs
}

// maxNpxManifest bounds what is read of one npx install's package.json,
// a few lines as npx writes it.
const maxNpxManifest = 1 << 20

// npxPackagesIn are the packages npx installed in the npm cache of the
// state directory dir: each npm/_npx/HASH/package.json lists those of one
// launch line; an install that names none (cut short), or whose list is
// no regular file within dir (the server wrote it), counts as someone
// else's.
func npxPackagesIn(dir string) []string {
	dirs, _ := filepath.Glob(filepath.Join(dir, "npm", "_npx", "*"))
	var pkgs []string
	for _, d := range dirs {
		var pj struct {
			Dependencies map[string]string `json:"dependencies"`
		}
		rel, err := filepath.Rel(dir, filepath.Join(d, "package.json"))
		var data []byte
		if err == nil {
			data, err = readBeneath(dir, rel, maxNpxManifest)
		}
		if err == nil {
			err = json.Unmarshal(data, &pj)
		}
		if err != nil || len(pj.Dependencies) == 0 {
			pkgs = append(pkgs, "an install naming no package in "+d)
			continue
		}
		for p := range pj.Dependencies {
			pkgs = append(pkgs, p)
		}
	}
	slices.Sort(pkgs)
	return slices.Compact(pkgs)
}

// uvHolds: uv's cache holds a wheel or an unpacked archive of pkg.
func uvHolds(cache, pkg string) bool {
	norm := pypiNormal(pkg)
	wheels, _ := filepath.Glob(filepath.Join(cache, "wheels-v*", "pypi", norm))
	dist, _ := filepath.Glob(filepath.Join(cache, "archive-v*", "*", strings.ReplaceAll(norm, "-", "_")+"-*.dist-info"))
	return len(wheels)+len(dist) > 0
}
