package pathrule

import (
	"path/filepath"
	"strings"
)

// Within reports whether path is dir or lies beneath it. Both are cleaned
// lexically first, so "/a/b/" and "/a//b" are "/a/b"; "/" holds every
// absolute path; "/a/bc" is not within "/a/b". Symbolic links are not
// followed: callers resolve them first where it matters.
//
// The rule is for absolute paths: a relative one is within nothing but
// itself, and nothing absolute is within a relative one.
func Within(path, dir string) bool {
	path, dir = filepath.Clean(path), filepath.Clean(dir)
	switch {
	case path == dir:
		return true
	case !filepath.IsAbs(path) || !filepath.IsAbs(dir):
		return false
	case dir == "/":
		return true
	}
	return strings.HasPrefix(path, dir+"/")
}
