package policy

import (
	"path"
	"unicode/utf8"
)

// MatchURIGlob reports whether uri matches one of globs (validated with
// ValidGlob). The syntax is path.Match's, but '/' is an ordinary character:
// in a URI, * runs across path segments, so file:///srv/* covers everything
// under /srv, and a deny rule cannot be slipped past one level down.
func MatchURIGlob(globs []string, uri string) bool {
	for _, g := range globs {
		if matchURI(g, uri) {
			return true
		}
	}
	return false
}

// matchURI matches one glob: a star backtracks to the latest star only,
// which is enough since a star matches any run.
func matchURI(g, s string) bool {
	starG, starS := -1, 0
	for i, j := 0, 0; ; {
		if i < len(g) && g[i] == '*' {
			starG, starS = i+1, j
			i++
			continue
		}
		if j == len(s) {
			for i < len(g) && g[i] == '*' {
				i++
			}
			return i == len(g)
		}
		if i < len(g) {
			if n, w, ok := matchOne(g[i:], s[j:]); ok {
				i, j = i+n, j+w
				continue
			}
		}
		if starG < 0 {
			return false
		}
		_, w := utf8.DecodeRuneInString(s[starS:])
		starS += w
		i, j = starG, starS
	}
}

// matchOne matches the element at the start of g (a character, an escaped
// one, ? or a class) against the first character of s, and says how many
// bytes of each it used. path.Match decides classes, which treat '/' as any
// other character.
func matchOne(g, s string) (gn, sn int, ok bool) {
	r, sn := utf8.DecodeRuneInString(s)
	switch g[0] {
	case '?':
		return 1, sn, true
	case '\\':
		if len(g) < 2 {
			return 0, 0, false
		}
		gr, w := utf8.DecodeRuneInString(g[1:])
		return 1 + w, sn, gr == r
	case '[':
		end := classEnd(g)
		if end < 0 {
			return 0, 0, false
		}
		m, err := path.Match(g[:end], s[:sn])
		return end, sn, err == nil && m
	}
	gr, w := utf8.DecodeRuneInString(g)
	return w, sn, gr == r
}

// classEnd is the length of the class [...] at the start of g, or -1.
func classEnd(g string) int {
	i := 1
	if i < len(g) && g[i] == '^' {
		i++
	}
	for i < len(g) {
		switch {
		case g[i] == ']':
			return i + 1
		case g[i] == '\\':
			i += 2
		default:
			i++
		}
	}
	return -1
}
