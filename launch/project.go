package launch

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/pathrule"
)

func absPath(wd, p string) string {
	if filepath.IsAbs(p) || wd == "" {
		return filepath.Clean(p)
	}
	return filepath.Join(wd, p)
}

// Files that mark a project's root, by interpreter family.
var projectMarkers = map[string][]string{
	"node":    {"package.json"},
	"python3": {"pyproject.toml", "setup.py", "setup.cfg", "requirements.txt"},
}

// projectOf is what a script needs to run: the nearest directory above it
// with a project marker, or the script's own directory, or the script
// alone when that directory is the home directory or /. A node script
// inside node_modules resolves its dependencies upwards, so its project is
// the directory that holds the outermost node_modules. "" when the script
// does not exist.
//
// A directory (node ., python3 app/) is run by what it holds, so it is
// its own script's directory.
func projectOf(script, fam string, h Host) string {
	st, err := os.Stat(script)
	if err != nil {
		return ""
	}
	if fam == "node" {
		if before, _, ok := strings.Cut(script+"/", "/node_modules/"); ok && before != "" && !isHomeOrAbove(before, h.Home) {
			return before
		}
	}
	dir := filepath.Dir(script)
	if st.IsDir() {
		dir = script
	}
	for d := dir; !isHomeOrAbove(d, h.Home); d = filepath.Dir(d) {
		for _, m := range projectMarkers[fam] {
			if _, err := os.Stat(filepath.Join(d, m)); err == nil {
				return d
			}
		}
	}
	switch {
	case !isHomeOrAbove(dir, h.Home):
		return dir
	case st.IsDir():
		return "" // granting it would grant the home directory, or /
	}
	return script
}

// isHomeOrAbove: granting d would grant the home directory, or all of /.
func isHomeOrAbove(d, home string) bool {
	if d == "/" || d == "." {
		return true
	}
	return home != "" && pathrule.Within(home, d)
}

// npmPackageOf is the name in the package.json nearest above script (or
// in it, a directory), the package the script belongs to; "" if there is
// none. A package.json without a name (dist/package.json saying only
// "type": "module") is not a package's.
func npmPackageOf(script string) string {
	start := filepath.Dir(script)
	if st, err := os.Stat(script); err == nil && st.IsDir() {
		start = script
	}
	for d := start; d != "/" && d != "."; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "package.json"))
		if err != nil {
			continue
		}
		var pkg struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(data, &pkg) != nil {
			return ""
		}
		if pkg.Name != "" {
			return pkg.Name
		}
	}
	return ""
}
