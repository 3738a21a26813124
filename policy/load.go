package policy

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// Loader reads policy files. Its only effect is reading the files it is
// asked for and the ones they extend.
type Loader struct {
	// Builtin holds the built-in policies, NAME.yaml for each (package
	// policies); nil means there are none.
	Builtin fs.FS
	Vars    Vars
	// Dir is where relative file names are read from ("" = the working
	// directory of this process), for a caller resolving for someone
	// else's; errors name files as given.
	Dir string
}

// IsFile tells a FILE from a built-in NAME where either may be given
// (--policy, extends): a file has a / in it or ends in .yaml or .yml.
func IsFile(ref string) bool {
	return strings.Contains(ref, "/") || strings.HasSuffix(ref, ".yaml") || strings.HasSuffix(ref, ".yml")
}

// Load returns Default with the policy ref names applied: a built-in NAME
// or a FILE, and what it extends before it. Origin says where each field
// it set was set. Errors are *FileError where the file says something
// wrong. The result is not validated: set what the command line adds, then
// call Origin.Validate.
func (l Loader) Load(ref string) (Policy, Origin, error) {
	p, o, _, err := l.LoadChain(ref)
	return p, o, err
}

// LoadChain is Load that also names the policies applied, ref first and
// then each one it extends in turn ("built-in NAME" or the file's path):
// what `policy explain` shows.
func (l Loader) LoadChain(ref string) (Policy, Origin, []string, error) {
	p, o := Default(), Origin{}
	var names []string
	err := l.load(ref, "", nil, nil, &p, o, &names)
	return p, o, names, err
}

// load applies ref, named in file from (at the extends entry kv; "" and
// nil for the policy asked for), after what it extends. chain is the
// extends chain so far, to refuse cycles; names collects it.
func (l Loader) load(ref, from string, kv *ast.MappingValueNode, chain []link, p *Policy, o Origin, names *[]string) error {
	name, id, data, err := l.read(ref, from)
	if err != nil {
		if kv == nil {
			return err
		}
		return &FileError{Pos: posOf(from, kv.Value), Err: &field.Error{Problem: "extends " + strconv.Quote(ref), Err: err}}
	}
	for i, seen := range chain {
		if seen.id == id {
			var names []string
			for _, c := range chain[i:] {
				names = append(names, c.name)
			}
			names = append(names, name)
			return &FileError{Pos: posOf(from, kv.Value), Err: &field.Error{
				Problem: "extends cycle: " + strings.Join(names, " → "), Fix: "remove one of these extends"}}
		}
	}
	doc, err := parse(name, data)
	if err != nil {
		return err
	}
	*names = append(*names, name)
	if doc.extends != nil {
		ref, err := extendsRef(name, doc.extends)
		if err != nil {
			return err
		}
		if err := l.load(ref, name, doc.extends, append(chain, link{id, name}), p, o, names); err != nil {
			return err
		}
	}
	return (&decoder{file: name, vars: l.Vars, p: p, origin: o}).apply(doc)
}

// extendsRef is the policy an extends entry of file names.
func extendsRef(file string, kv *ast.MappingValueNode) (string, error) {
	s, ok := scalarOf(kv.Value)
	if !ok || s.kind != "string" || s.text == "" {
		return "", &FileError{Pos: posOf(file, kv.Value), Err: &field.Error{
			Problem: "extends must name a built-in policy or a file", Fix: "e.g. extends: default, or extends: ./base.yaml"}}
	}
	return s.text, nil
}

// link is one file of an extends chain.
type link struct{ id, name string }

// read finds ref: a built-in, or a file relative to the file that names
// it. name is how errors call it, id what tells one policy from another.
func (l Loader) read(ref, from string) (name, id string, data []byte, err error) {
	if !IsFile(ref) {
		data, err := l.builtin(ref)
		return "built-in " + ref, "built-in " + ref, data, err
	}
	if strings.HasPrefix(from, "built-in ") {
		return "", "", nil, errors.New("a built-in policy extends only built-ins")
	}
	path := ref
	if from != "" && !filepath.IsAbs(ref) {
		path = filepath.Join(filepath.Dir(from), ref)
	}
	open := path
	if l.Dir != "" && !filepath.IsAbs(path) {
		open = filepath.Join(l.Dir, path)
	}
	data, err = os.ReadFile(open)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", "", nil, errors.New("no such file " + path)
		}
		return "", "", nil, err
	}
	abs, absErr := filepath.Abs(open)
	if absErr != nil {
		abs = filepath.Clean(open)
	}
	return path, abs, data, nil
}

func (l Loader) builtin(name string) ([]byte, error) {
	if l.Builtin != nil {
		if data, err := fs.ReadFile(l.Builtin, name+".yaml"); err == nil {
			return data, nil
		}
	}
	var names []string
	if l.Builtin != nil {
		found, _ := fs.Glob(l.Builtin, "*.yaml")
		for _, f := range found {
			names = append(names, strings.TrimSuffix(f, ".yaml"))
		}
	}
	msg := "no built-in policy " + strconv.Quote(name) + " (built-ins: " + strings.Join(names, ", ") + ")"
	return nil, errors.New(msg + "; for a file in this directory write ./" + name)
}
