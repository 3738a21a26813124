package resolve

import (
	"path/filepath"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/launch"
	"github.com/mcpsandbox/mcpsandbox/policies"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Grant is one host path the server sees at the same path, and who asked
// for it.
type Grant struct {
	Path     string
	Writable bool
	From     []Source // who asked, in the order they did
	// Covers are the automatic grants this one took the place of: a
	// user's grant that holds an automatic one wins over it, whatever
	// their modes.
	Covers []Grant
}

// Source is one asker of a grant.
type Source struct {
	Kind Kind
	// Name is the policy for Given, File and Builtin ("./x.yaml",
	// "built-in node"; "" for Given), what the launch line needs the path
	// for for Launch ("the program's installation").
	Name string
}

// Kind is who asks for a grant: the caller or a policy file of theirs
// (a user's grants), or a built-in policy or the launch line (automatic).
type Kind int

const (
	Given   Kind = iota // the caller's overrides (run: --ro, --rw)
	File                // a policy file of the caller's
	Builtin             // a built-in policy (node's ${PROJECT})
	Launch              // the launch line itself (launch.Launch.Grants)
)

// Automatic: nobody but a built-in or the launch line asked for it.
func (g Grant) Automatic() bool {
	for _, s := range g.From {
		if s.Kind == Given || s.Kind == File {
			return false
		}
	}
	return true
}

// grants settles the host paths p grants with the launch line's (l's)
// added: who asked for each, the same path and mode asked twice granted
// once, and an automatic grant that a user's grant holds left to it.
// fromBuiltin counts the items of p's lists that a built-in policy set
// (they come first); given the lists' given items (they come last).
func grants(p policy.Policy, fromBuiltin, given [2]int, file string, builtin string, l launch.Launch) ([]Grant, error) {
	var all []Grant
	add := func(path string, writable bool, s Source) {
		for i := range all {
			if all[i].Path == path && all[i].Writable == writable {
				all[i].From = append(all[i].From, s)
				return
			}
		}
		all = append(all, Grant{Path: path, Writable: writable, From: []Source{s}})
	}
	for i, list := range [2][]string{p.ReadOnly, p.ReadWrite} {
		for j, path := range list {
			s := Source{Kind: File, Name: file}
			switch {
			case j < fromBuiltin[i]:
				s = Source{Kind: Builtin, Name: builtin}
			case j >= len(list)-given[i]:
				s = Source{Kind: Given}
			}
			add(path, i == 1, s)
		}
	}
	auto, err := l.Grants(p)
	if err != nil {
		return nil, err
	}
	for _, g := range auto {
		add(g.Path, g.Writable, Source{Kind: Launch, Name: g.Why})
	}
	return yield(all), nil
}

// yield drops each automatic grant that a user's grant holds, noting it
// in the most specific such grant's Covers.
func yield(all []Grant) []Grant {
	kept := make([]Grant, 0, len(all))
	var covered []Grant
	for _, g := range all {
		if g.Automatic() && holder(g, all) >= 0 {
			covered = append(covered, g)
			continue
		}
		kept = append(kept, g)
	}
	for _, c := range covered {
		i := holder(c, kept)
		kept[i].Covers = append(kept[i].Covers, c)
	}
	return kept
}

// holder is the index in gs of the most specific user's grant holding g,
// or -1.
func holder(g Grant, gs []Grant) int {
	best := -1
	for i, h := range gs {
		if h.Automatic() || !within(filepath.Clean(g.Path), filepath.Clean(h.Path)) {
			continue
		}
		if best < 0 || len(h.Path) > len(gs[best].Path) {
			best = i
		}
	}
	return best
}

func within(path, dir string) bool {
	return path == dir || dir == "/" || strings.HasPrefix(path, dir+"/")
}

// builtinItems counts the ReadOnly and ReadWrite items that the built-ins
// of chain set: all of them when ref is a built-in, else those of the
// first built-in a file extends (built-ins extend only built-ins), read
// again alone.
func builtinItems(p policy.Policy, chain []string, given [2]int, vars policy.Vars) ([2]int, string) {
	for i, name := range chain {
		base, ok := strings.CutPrefix(name, "built-in ")
		if !ok {
			continue
		}
		if i == 0 {
			return [2]int{len(p.ReadOnly) - given[0], len(p.ReadWrite) - given[1]}, name
		}
		b, _, err := policy.Loader{Builtin: policies.FS, Vars: vars}.Load(base)
		if err != nil {
			return [2]int{}, ""
		}
		return [2]int{len(b.ReadOnly), len(b.ReadWrite)}, name
	}
	return [2]int{}, ""
}
