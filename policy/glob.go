package policy

import "path"

// ValidGlob reports whether g is a glob the MCP rules accept (path.Match
// syntax: * and ? never match '/', which tool names seldom hold).
func ValidGlob(g string) bool {
	if g == "" {
		return false
	}
	_, err := path.Match(g, "")
	return err == nil
}

// MatchGlob reports whether name matches one of globs (validated ones).
func MatchGlob(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// validToolPrefix reports whether p keeps tool names within the characters
// MCP allows in them (A-Z a-z 0-9 _ - .).
func validToolPrefix(p string) bool {
	for _, c := range p {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.':
		default:
			return false
		}
	}
	return true
}
