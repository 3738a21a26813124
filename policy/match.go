package policy

import (
	"io/fs"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// Match says which launch lines select a built-in policy when `run` is
// given none. It names exact things, never patterns: a package as npm or
// PyPI spells it, or a program's base name. Only built-ins have one; the
// launch line is read elsewhere (package launch), as policy reads nothing.
type Match struct {
	Policy   string   // the built-in's name
	NPM      []string // npm packages: npx PKG, node <that package's script>
	PyPI     []string // PyPI packages: uvx PKG, python3 -m <its module>
	Programs []string // interpreters, by base name: node, python3
}

// matchKey is the top-level key of a built-in's Match.
const matchKey = "match"

var matchKeys = []string{"npm", "pypi", "programs"}

// Matches reads the match section of every built-in policy in builtin.
func Matches(builtin fs.FS) ([]Match, error) {
	files, err := fs.Glob(builtin, "*.yaml")
	if err != nil {
		return nil, err
	}
	var out []Match
	for _, f := range files {
		name := strings.TrimSuffix(f, ".yaml")
		data, err := fs.ReadFile(builtin, f)
		if err != nil {
			return nil, err
		}
		doc, err := parse("built-in "+name, data)
		if err != nil {
			return nil, err
		}
		if doc.match == nil {
			continue
		}
		m, err := decodeMatch(doc.file, doc.match)
		if err != nil {
			return nil, err
		}
		m.Policy = name
		out = append(out, m)
	}
	return out, nil
}

func decodeMatch(file string, kv *ast.MappingValueNode) (Match, error) {
	var m Match
	at := func(n ast.Node, problem, fix string) error {
		return &FileError{Pos: posOf(file, n), Err: &field.Error{Problem: problem, Fix: fix}}
	}
	list, ok := entries(kv.Value)
	if !ok {
		return m, at(kv.Value, "match must be a mapping", "e.g. match: {npm: [\"@scope/pkg\"]}")
	}
	for _, e := range list {
		name, _ := keyName(e)
		var dst *[]string
		switch name {
		case "npm":
			dst = &m.NPM
		case "pypi":
			dst = &m.PyPI
		case "programs":
			dst = &m.Programs
		default:
			return m, at(e.Key, "unknown key "+strconv.Quote(name)+" in match", suggest(name, matchKey, matchKeys))
		}
		seq, ok := unwrap(e.Value).(*ast.SequenceNode)
		if !ok {
			return m, at(e.Value, "match."+name+" must be a list", "e.g. [name]")
		}
		for _, item := range seq.Values {
			s, ok := scalarOf(item)
			if !ok || s.kind != "string" || s.text == "" || strings.ContainsAny(s.text, "*?[") {
				return m, at(item, "match."+name+" items are exact names", "write the package or program as it is spelt, no patterns")
			}
			*dst = append(*dst, s.text)
		}
	}
	return m, nil
}
