package mcprules

import "strings"

// While resource rules are set, a URI a server might resolve other than as
// written is refused as uncheckable: the server could resolve it to one the
// rules deny.

// uncheckableURI says why a URI cannot be trusted to mean what the globs
// saw ("" when it can).
func uncheckableURI(uri string) string {
	scheme, rest, ok := strings.Cut(uri, ":")
	if ok && strings.ToLower(scheme) != scheme {
		return "its scheme is not in lower case"
	}
	if !ok {
		rest = uri
	}
	for _, esc := range []string{"%2e", "%2f", "%5c"} {
		if strings.Contains(strings.ToLower(rest), esc) {
			return "it escapes '.', '/' or '\\'"
		}
	}
	if strings.Contains(rest, "\\") {
		return "it holds a '\\'"
	}
	path := rest
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	for _, seg := range strings.Split(path, "/") {
		if seg == "." || seg == ".." {
			return "it has a " + seg + " segment"
		}
	}
	return ""
}
