package launch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// argPaths are the arguments that name existing host paths, made
// absolute: the directories a filesystem server serves, a database file.
// A --flag=PATH counts by its value. The program is not an argument.
func argPaths(args []string, h Host) ([]string, error) {
	var paths []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			_, v, ok := strings.Cut(a, "=")
			if !ok {
				continue
			}
			a = v
		}
		if a == "" || !looksLikePath(a) {
			continue
		}
		p := absPath(h.WorkDir, a)
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if p == "/" || within(p, "/proc") || within(p, "/sys") || within(p, "/dev") {
			return nil, fmt.Errorf("the argument %s would grant %s, which is never granted", a, p)
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// looksLikePath: an absolute or explicitly relative path, or a bare name
// of something in the working directory (checked by the caller).
func looksLikePath(a string) bool {
	return !strings.Contains(a, "://") && !strings.HasPrefix(a, "@")
}

// writable is what a read-write grant of path gives: a directory itself,
// a file's directory, since programs write beside their files (SQLite's
// journal, an editor's temporary file) — but never the home directory or /.
func writable(path, home string) string {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return path
	}
	if dir := filepath.Dir(path); !isHomeOrAbove(dir, home) {
		return dir
	}
	return path
}
