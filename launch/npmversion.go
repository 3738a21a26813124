package launch

import (
	"path/filepath"
	"regexp"
	"slices"
)

// A launch line such as `npx -y pkg` runs whatever version the registry
// calls latest on the day its cache is filled: prepare resolves it to an
// exact one, and wrap writes that into the host's file, so that the line
// names the code it runs.

// NpmSpec is the registry package an npx launch line runs, as written.
type NpmSpec struct {
	Name   string // @scope/name
	Wanted string // the version, tag or range asked for: "" (latest), "latest", "^1.2", "1.2.3"
}

// String is the spec as npm reads it.
func (s NpmSpec) String() string {
	if s.Wanted == "" {
		return s.Name
	}
	return s.Name + "@" + s.Wanted
}

// exactVersion is a version as npm takes it exactly: 1.2.3, v1.2.3,
// =1.2.3, a prerelease or build kept (semver's grammar, loosely).
var exactVersion = regexp.MustCompile(`^[=v]?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// Exact: the spec asks for one version, not a tag or a range.
func (s NpmSpec) Exact() bool { return exactVersion.MatchString(s.Wanted) }

// NpmSpec is the one registry package the npx launch line installs; false
// for any other line (several packages, a path, a URL, git:, an alias,
// not npx).
func (l Launch) NpmSpec() (NpmSpec, bool) {
	if len(l.Given) == 0 || family(filepath.Base(l.Given[0])) != "npx" || l.line.refuse != "" ||
		len(l.line.specs) != 1 || len(l.line.specAt) != 1 {
		return NpmSpec{}, false
	}
	name, wanted, ok := npmSpec(l.line.specs[0])
	return NpmSpec{Name: name, Wanted: wanted}, ok
}

// WithVersion is the launch line with its package's spec made
// NAME@version, every other argument as given; nil for a line NpmSpec
// does not read.
func (l Launch) WithVersion(version string) []string {
	s, ok := l.NpmSpec()
	if !ok {
		return nil
	}
	line := slices.Clone(l.Given)
	i := l.line.specAt[0]
	prefix := line[i][:len(line[i])-len(l.line.specs[0])] // --package=
	line[i] = prefix + s.Name + "@" + version
	return line
}
