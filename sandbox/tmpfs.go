package sandbox

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/internal/pathrule"
	"github.com/mcpsandbox/mcpsandbox/sandbox/internal/initstage"
)

// Spec.Tmpfs: more private, empty tmpfs mounts like HOME (TmpSize each,
// nosuid, nodev, noexec with NoExecTmp, mode 0700, owned by the server),
// for the cache or scratch directory a server expects at a fixed path. The
// init stage mounts them after /tmp and HOME, which may hold them, and
// before the grants.

// resolveTmpfs checks the Tmpfs paths against the grants and orders them
// parents first. A tmpfs and a grant may not lie one beneath the other:
// either the tmpfs would hide part of the grant, or the grant's mount
// point would be made inside a tmpfs that is meant to start empty.
func resolveTmpfs(paths []string, binds []initstage.Bind) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			return nil, &field.Error{Field: "Tmpfs", Value: p, Problem: "the path must be absolute", Fix: "give the path the server sees, e.g. /var/cache/app"}
		}
		clean := filepath.Clean(p)
		if clean == "/" {
			return nil, &field.Error{Field: "Tmpfs", Value: p, Problem: "a tmpfs over the whole root hides the system the server runs on", Fix: "name the directory the server writes to"}
		}
		// A tmpfs there would hide /proc's masking, the minimal /dev or
		// the server's cgroup.
		for _, r := range builtPaths() {
			if pathrule.Within(clean, r) {
				return nil, &field.Error{Field: "Tmpfs", Value: p, Problem: r + " is built by the sandbox", Fix: "drop this {Tmpfs} path"}
			}
		}
		if clean == "/tmp" || clean == sandboxHome {
			return nil, &field.Error{Field: "Tmpfs", Value: p, Problem: "is a private tmpfs already", Fix: "drop this {Tmpfs} path"}
		}
		for _, b := range binds {
			if pathrule.Within(clean, b.Path) || pathrule.Within(b.Path, clean) {
				return nil, &field.Error{Field: "Tmpfs", Value: p,
					Problem: "overlaps {" + b.Field() + "} " + b.Path + ": a tmpfs would hide the grant's files, or the grant would be shown inside the empty tmpfs",
					Fix:     "keep one of the two, or name paths that do not lie one beneath the other"}
			}
		}
		if !seen[clean] {
			seen[clean] = true
			out = append(out, clean)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		di, dj := strings.Count(out[i], "/"), strings.Count(out[j], "/")
		if di != dj {
			return di < dj
		}
		return out[i] < out[j]
	})
	return out, nil
}
