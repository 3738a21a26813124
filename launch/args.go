package launch

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/internal/pathrule"
)

// argPaths are the server's arguments that name existing host paths, made
// absolute: the directories a filesystem server serves, a database file.
// A --flag=PATH counts by its value. The program is not an argument, nor
// are a launcher's or interpreter's own flags and the package or script
// it runs (serverArgs).
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
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			real = p
		}
		for _, q := range []string{p, real} {
			if q == "/" || pathrule.Within(q, "/proc") || pathrule.Within(q, "/sys") || pathrule.Within(q, "/dev") {
				return nil, &field.Error{Field: "GrantArgs",
					Problem: "the argument " + a + " names " + q + ", which {GrantArgs} never grants",
					Fix:     "name the directories the server needs, or set {GrantArgs} none and grant them with {ReadOnly} or {ReadWrite}"}
			}
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// serverArgs are the arguments of cmd that are the server's own, after
// what l (parseLine's) says is the launcher's or interpreter's: npx's or
// uvx's flags and package, node's or python's flags and script (or module,
// or code); all of them for another program.
func serverArgs(cmd []string, l line) []string {
	args := cmd[1:]
	return args[min(l.rest, len(args)):]
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
