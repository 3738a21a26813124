package main

import (
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
)

// vscodeProfile is one of VS Code's profiles: each keeps its own mcp.json
// and settings.json in User/profiles/ID.
type vscodeProfile struct{ dir, name string }

// vscodeProfiles are the profiles under the VS Code user directory user,
// by directory, each named as VS Code names it (its globalStorage's
// storage.json lists them), else by its directory's id.
func vscodeProfiles(user string) []vscodeProfile {
	dirs, err := os.ReadDir(filepath.Join(user, "profiles"))
	if err != nil {
		return nil
	}
	names := map[string]string{}
	var storage struct {
		Profiles []struct{ Location, Name string } `json:"userDataProfiles"`
	}
	if b, err := os.ReadFile(filepath.Join(user, "globalStorage", "storage.json")); err == nil && json.Unmarshal(b, &storage) == nil {
		for _, p := range storage.Profiles {
			names[p.Location] = p.Name
		}
	}
	var out []vscodeProfile
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		name := names[d.Name()]
		if name == "" {
			name = d.Name()
		}
		out = append(out, vscodeProfile{filepath.Join(user, "profiles", d.Name()), name})
	}
	slices.SortFunc(out, func(a, b vscodeProfile) int { return cmp.Compare(a.name, b.name) })
	return out
}
