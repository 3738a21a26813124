package npmregistry

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// Ranges are npm's syntax (^, ~, x, hyphen ranges, ||), which
// Masterminds/semver reads; the prerelease rule is npm's, applied on top.

// ParseSpec splits a registry spec as npx takes it: "pkg", "pkg@1.2.3",
// "pkg@^1.2", "pkg@latest", "@scope/pkg@next". want is "" for no version.
// Specs that are no registry package (git, file, URL, alias) are refused.
func ParseSpec(spec string) (name, want string, err error) {
	name, want = spec, ""
	if i := strings.LastIndex(spec, "@"); i > 0 {
		name, want = spec[:i], spec[i+1:]
	}
	if strings.HasPrefix(want, "npm:") || strings.Contains(name, ":") || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "/") ||
		(strings.Count(name, "/") == 1 && !strings.HasPrefix(name, "@")) {
		return "", "", fmt.Errorf("%q is no package of a registry (a git, file, URL or alias spec is not resolved here): give NAME or NAME@VERSION", spec)
	}
	if err := checkName(name); err != nil {
		return "", "", fmt.Errorf("%q: %v", spec, err)
	}
	return name, strings.TrimSpace(want), nil
}

var namePart = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._~-]*$`)

// checkName accepts npm's package names: "name" or "@scope/name", URL-safe,
// at most 214 characters (upper case only in packages from before npm
// refused it).
func checkName(name string) error {
	parts := []string{name}
	if scope, rest, ok := strings.Cut(name, "/"); ok && strings.HasPrefix(scope, "@") {
		parts = []string{scope[1:], rest}
	}
	for _, p := range parts {
		if len(name) > 214 || !namePart.MatchString(p) {
			return fmt.Errorf("%q is no npm package name: names are NAME or @SCOPE/NAME, of letters, digits and - . _ ~, at most 214 characters", name)
		}
	}
	return nil
}

// Resolve resolves spec (see ParseSpec) on the registry, as npm does.
func (c *Client) Resolve(ctx context.Context, spec string) (*Version, error) {
	name, want, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	p, err := c.Packument(ctx, name)
	if err != nil {
		return nil, err
	}
	return p.Resolve(want)
}

// Resolve picks the version want names, as npm picks it: "" and a dist-tag
// are the tag's version ("" is latest); an exact version is that version;
// a range is the latest tag's version when it satisfies the range, else
// the highest version satisfying it, a deprecated one only when no other
// does. Prereleases satisfy a range only when one of its comparators is a
// prerelease of the same major.minor.patch.
func (p *Packument) Resolve(want string) (*Version, error) {
	want = strings.TrimSpace(want)
	if want == "" {
		want = "latest"
	}
	if exact, err := semver.StrictNewVersion(strings.TrimLeft(want, "=v")); err == nil {
		return p.Version(exact.Original())
	}
	if version, ok := p.DistTags[want]; ok {
		return p.Version(version)
	}
	r, err := semver.NewConstraint(want)
	if err != nil {
		return nil, fmt.Errorf("%s has no dist-tag %q of %s, and it is no version range: its tags are %s", p.Registry, want, p.Name, p.tagList())
	}
	groups := rangeGroups(want)
	if latest, ok := p.DistTags["latest"]; ok {
		if v, err := semver.StrictNewVersion(latest); err == nil && (want == "*" || satisfies(r, groups, v)) {
			if got, err := p.Version(latest); err == nil && got.Deprecated == "" {
				return got, nil
			}
		}
	}
	var best, bestDeprecated *Version
	for _, v := range p.sortedVersions() {
		if !satisfies(r, groups, v) {
			continue
		}
		got, err := p.Version(v.Original())
		if err != nil {
			return nil, err
		}
		if got.Deprecated == "" {
			best = got
			break
		}
		if bestDeprecated == nil {
			bestDeprecated = got
		}
	}
	switch {
	case best != nil:
		return best, nil
	case bestDeprecated != nil:
		return bestDeprecated, nil
	}
	return nil, fmt.Errorf("no version of %s on %s satisfies %q%s", p.Name, p.Registry, want, p.tagsHint())
}

// sortedVersions are the packument's versions, highest first.
func (p *Packument) sortedVersions() []*semver.Version {
	var vs []*semver.Version
	for s := range p.versions {
		if v, err := semver.StrictNewVersion(s); err == nil {
			vs = append(vs, v)
		}
	}
	slices.SortFunc(vs, func(a, b *semver.Version) int { return b.Compare(a) })
	return vs
}

func (p *Packument) tagList() string {
	var tags []string
	for tag, v := range p.DistTags {
		tags = append(tags, tag+" → "+v)
	}
	slices.Sort(tags)
	if len(tags) == 0 {
		return "none"
	}
	return strings.Join(tags, ", ")
}

// rangeGroup is one ||-alternative of a range.
type rangeGroup struct {
	c    *semver.Constraints
	pres []*semver.Version // its comparators' prerelease versions
}

var comparatorVersion = regexp.MustCompile(`\d+\.\d+\.\d+-[0-9A-Za-z.-]+`)

func rangeGroups(want string) []rangeGroup {
	var gs []rangeGroup
	for _, alt := range strings.Split(want, "||") {
		c, err := semver.NewConstraint(strings.TrimSpace(alt))
		if err != nil {
			continue
		}
		g := rangeGroup{c: c}
		for _, s := range comparatorVersion.FindAllString(alt, -1) {
			if v, err := semver.StrictNewVersion(s); err == nil {
				g.pres = append(g.pres, v)
			}
		}
		gs = append(gs, g)
	}
	return gs
}

// satisfies is npm's satisfies: a prerelease only through a group with a
// prerelease comparator of its own major.minor.patch.
func satisfies(r *semver.Constraints, groups []rangeGroup, v *semver.Version) bool {
	if v.Prerelease() == "" {
		return r.Check(v)
	}
	for _, g := range groups {
		if !g.c.Check(v) {
			continue
		}
		for _, pre := range g.pres {
			if pre.Major() == v.Major() && pre.Minor() == v.Minor() && pre.Patch() == v.Patch() {
				return true
			}
		}
	}
	return false
}
