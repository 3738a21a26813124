package policy

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// document is one parsed policy file, its top-level keys checked.
type document struct {
	file    string
	entries []*ast.MappingValueNode
	extends *ast.MappingValueNode // nil when the file extends nothing
	match   *ast.MappingValueNode // a built-in's launch lines (Match); nil if none
}

// parse reads a policy file's YAML and checks its top-level names.
func parse(file string, data []byte) (*document, error) {
	at := func(n ast.Node, problem, fix string) error {
		return &FileError{Pos: posOf(file, n), Err: &field.Error{Problem: problem, Fix: fix}}
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		var se *yaml.SyntaxError
		if errors.As(err, &se) && se.Token != nil {
			p := se.Token.Position
			return nil, &FileError{Pos: Pos{file, p.Line, p.Column}, Err: &field.Error{Problem: "YAML: " + se.Message}}
		}
		return nil, &FileError{Pos: Pos{file, 1, 1}, Err: &field.Error{Problem: "YAML", Err: err}}
	}
	var body ast.Node
	for i, d := range f.Docs {
		if d.Body == nil {
			continue
		}
		if i > 0 {
			return nil, at(d.Body, "a second YAML document", "a policy file holds one: remove what follows ---")
		}
		if !isNull(d.Body) {
			body = d.Body
		}
	}
	if body == nil {
		return &document{file: file}, nil
	}
	return documentOf(file, body, "a policy file")
}

// documentOf checks the top-level names of body, a policy's mapping (what
// names the whole: a policy file, or an inline policy).
func documentOf(file string, body ast.Node, what string) (*document, error) {
	at := func(n ast.Node, problem, fix string) error {
		return &FileError{Pos: posOf(file, n), Err: &field.Error{Problem: problem, Fix: fix}}
	}
	list, ok := entries(body)
	if !ok {
		return nil, at(body, what+" is a mapping of sections", "e.g. limits: {memory: 512MiB}")
	}
	doc := &document{file: file, entries: list}
	for _, kv := range doc.entries {
		name, plain := keyName(kv)
		switch {
		case plain && name == extendsKey:
			doc.extends = kv
		case plain && name == matchKey:
			if !strings.HasPrefix(file, "built-in ") {
				return nil, at(kv.Key, "match is only for built-in policies", "delete it: a file is chosen with --policy FILE")
			}
			doc.match = kv
		case plain && isTop(name):
		default:
			return nil, at(kv.Key, "unknown key "+strconv.Quote(name), suggest(name, "", topNames()))
		}
	}
	return doc, nil
}

func isTop(name string) bool {
	for _, n := range topNames() {
		if n == name {
			return true
		}
	}
	return false
}

// suggest is the hint for an unknown key: the same key in another section
// (pids at the top is limits.pids, not pins), or the closest key of its
// section, or the list of keys.
func suggest(bad, section string, names []string) string {
	for _, k := range keys {
		if k.Section != section && (k.Name == bad || k.Path() == bad) {
			return "did you mean " + k.Path() + "?"
		}
	}
	if guess := closest(bad, names); guess != "" {
		return "did you mean " + guess + "?"
	}
	where := "a policy file"
	if section != "" {
		where = section
	}
	return "the keys of " + where + " are " + strings.Join(names, ", ")
}

// posOf is where n starts; a mapping's token is its first ':', so it is
// placed at its first key.
func posOf(file string, n ast.Node) Pos {
	if list, ok := entries(n); ok && len(list) > 0 {
		n = list[0].Key
	}
	p := n.GetToken().Position
	return Pos{file, p.Line, p.Column}
}

// decoder applies one document's keys onto a policy.
type decoder struct {
	file   string
	vars   Vars
	p      *Policy
	origin Origin
	// This document's say on the network mode (SelectNet): its
	// network.mode value, and its allow-hosts key if it has items.
	mode, hosts ast.Node
}

func (d *decoder) fail(n ast.Node, fe *field.Error) error {
	return &FileError{Pos: posOf(d.file, n), Err: fe, origin: d.origin}
}

func (d *decoder) apply(doc *document) error {
	for _, kv := range doc.entries {
		name, _ := keyName(kv)
		if name == extendsKey || name == matchKey {
			continue
		}
		if sk := sectionKeys(""); findKey(sk, name) != nil {
			if err := d.set(*findKey(sk, name), kv); err != nil {
				return err
			}
			continue
		}
		if err := d.section(name, kv); err != nil {
			return err
		}
	}
	return d.selectNet()
}

func findKey(in []Key, name string) *Key {
	for i := range in {
		if in[i].Name == name {
			return &in[i]
		}
	}
	return nil
}

func (d *decoder) section(section string, kv *ast.MappingValueNode) error {
	in := sectionKeys(section)
	var names []string
	for _, k := range in {
		names = append(names, k.Name)
	}
	if isNull(kv.Value) {
		return nil // an empty section, its keys perhaps commented out
	}
	list, ok := entries(kv.Value)
	if !ok {
		return d.fail(kv.Value, &field.Error{Problem: section + " must be a mapping of its keys (" + strings.Join(names, ", ") + ")",
			Fix: "e.g. " + section + ": {" + names[0] + ": ...}"})
	}
	for _, e := range list {
		name, _ := keyName(e)
		k := findKey(in, name)
		if k == nil {
			return d.fail(e.Key, &field.Error{Problem: "unknown key " + strconv.Quote(name) + " in " + section, Fix: suggest(name, section, names)})
		}
		if err := d.set(*k, e); err != nil {
			return err
		}
	}
	return nil
}

// set parses the value of k's entry into its Policy field, by the field's
// type: lists add to what the file extends, other values replace it.
func (d *decoder) set(k Key, kv *ast.MappingValueNode) error {
	f := reflect.ValueOf(d.p).Elem().FieldByName(k.Field).Addr().Interface()
	n := unwrap(kv.Value)
	if _, alias := n.(*ast.AliasNode); alias {
		return d.fail(n, &field.Error{Field: k.Field, Problem: "aliases (*name) are not supported in policy files", Fix: "write the value, or put shared settings in a file to extend"})
	}
	if list, ok := f.(*[]string); ok {
		if k.Path() == envSetKey {
			return d.setEnvMapping(k, n, list)
		}
		if k.Path() == overridesKey {
			return d.setOverrides(k, n, list)
		}
		if isHostList(k.Field) {
			return d.setHosts(k, kv, list)
		}
		return d.setList(k, n, list)
	}
	s, ok := scalarOf(n)
	if !ok {
		return d.fail(n, &field.Error{Field: k.Field, Problem: "must be " + want(f)})
	}
	if s.kind == "null" {
		return d.fail(kv.Key, &field.Error{Field: k.Field, Problem: "has no value: give it " + want(f) + " or delete the key"})
	}
	if k.Expand && s.kind == "string" {
		d.noteState(s.text, n)
	}
	if err := d.setScalar(k, f, s); err != nil {
		return d.fail(n, err)
	}
	if k.Field == "Net" {
		d.mode = n
	}
	d.origin[k.Field] = posOf(d.file, kv.Key)
	return nil
}

func (d *decoder) setList(k Key, n ast.Node, list *[]string) error {
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		return d.fail(n, &field.Error{Field: k.Field, Problem: "must be a list", Fix: "e.g. [/srv/data] or one - item per line"})
	}
	var add []string
	for _, item := range seq.Values {
		s, ok := scalarOf(item)
		if !ok || s.kind != "string" {
			return d.fail(item, &field.Error{Field: k.Field, Problem: "items must be strings", Fix: "quote it"})
		}
		if k.Path() == envPassKey && !validEnvName(s.text) {
			return d.fail(item, &field.Error{Field: k.Field, Value: strconv.Quote(s.text), Problem: "is no variable name",
				Fix: "env.pass lists names whose values mcpsandbox passes on; set a value under env.set: {NAME: VALUE}"})
		}
		if !k.Expand {
			if strings.Contains(s.text, "${") {
				return d.fail(item, &field.Error{Field: k.Field, Value: strconv.Quote(s.text), Problem: "variables are expanded only in paths and environment values"})
			}
			add = append(add, s.text)
			continue
		}
		d.noteState(s.text, item)
		vals, err := d.vars.expandItem(s.text)
		if err != nil {
			return d.fail(item, &field.Error{Field: k.Field, Err: err})
		}
		add = append(add, vals...)
	}
	*list = append(*list, add...)
	d.origin[k.Field] = posOf(d.file, n)
	return nil
}

// setScalar sets f from s; the error is about the value.
func (d *decoder) setScalar(k Key, f any, s scalar) *field.Error {
	bad := func(fix string) *field.Error {
		return &field.Error{Field: k.Field, Value: strconv.Quote(s.text), Problem: "must be " + want(f), Fix: fix}
	}
	wrap := func(err error) *field.Error { return &field.Error{Field: k.Field, Err: err} }
	text := s.text
	if s.kind == "string" && k.Expand {
		var err error
		if text, err = d.vars.expand(text); err != nil {
			return wrap(err)
		}
	} else if strings.Contains(text, "${") {
		return &field.Error{Field: k.Field, Value: strconv.Quote(text), Problem: "variables are expanded only in paths and environment values"}
	}
	var err error
	switch v := f.(type) {
	case *string:
		if s.kind != "string" {
			return bad("quote it: " + strconv.Quote(text))
		}
		*v = text
	case *bool:
		if s.kind != "bool" {
			return bad("")
		}
		*v = s.isTrue()
	case *int, *int64, *uint64:
		if s.kind != "int" {
			return bad("")
		}
		if err = setInt(v, text); err != nil {
			return bad("write it in decimal digits")
		}
	case *float64:
		if s.kind != "int" && s.kind != "float" {
			return bad("")
		}
		if *v, err = strconv.ParseFloat(text, 64); err != nil {
			return bad("")
		}
	case *ByteSize:
		if s.kind != "string" && s.kind != "int" {
			return bad("")
		}
		if *v, err = ParseByteSize(text); err != nil {
			return wrap(err)
		}
	case *time.Duration:
		if s.kind != "string" && s.kind != "int" {
			return bad("")
		}
		if *v, err = time.ParseDuration(text); err != nil {
			return bad("")
		}
	case *Backoff:
		if s.kind != "string" {
			return bad("")
		}
		if *v, err = ParseBackoff(text); err != nil {
			return wrap(err)
		}
	}
	return nil
}

func setInt(f any, text string) error {
	switch v := f.(type) {
	case *int:
		n, err := strconv.Atoi(text)
		*v = n
		return err
	case *int64:
		n, err := strconv.ParseInt(text, 10, 64)
		*v = n
		return err
	case *uint64:
		n, err := strconv.ParseUint(text, 10, 64)
		*v = n
		return err
	}
	return nil
}

// want describes what a field of f's type takes, with an example.
func want(f any) string {
	switch f.(type) {
	case *string:
		return "a string"
	case *bool:
		return "true or false"
	case *int, *int64, *uint64:
		return "a whole number, e.g. 256"
	case *float64:
		return "a number, e.g. 0.5"
	case *ByteSize:
		return "a size, e.g. 64MiB"
	case *time.Duration:
		return "a duration such as 500ms, 15s or 2m"
	case *Backoff:
		return "a range MIN..MAX, e.g. 100ms..30s"
	case *[]string:
		return "a list"
	}
	return "a value"
}
