package config

import (
	"bytes"
	"errors"
	"strconv"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/tailscale/hujson"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/internal/yamlnode"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The file is JSON (or JSON with comments and trailing commas, as VS Code
// writes mcp.json), read with goccy/go-yaml, whose syntax tree keeps every
// node's line and column: the parser policy files use, so an inline
// policy is decoded by package policy in place.

// parseFile reads data into its top node, nil for an empty file.
func parseFile(file string, data []byte) (ast.Node, error) {
	f, err := parser.ParseBytes(stripComments(data), 0, parser.AllowDuplicateMapKey())
	if err != nil {
		var se *yaml.SyntaxError
		if errors.As(err, &se) && se.Token != nil {
			p := se.Token.Position
			return nil, &policy.FileError{Pos: policy.Pos{File: file, Line: p.Line, Col: p.Column}, Err: &field.Error{Problem: "JSON: " + se.Message}}
		}
		return nil, &policy.FileError{Pos: policy.Pos{File: file, Line: 1, Col: 1}, Err: &field.Error{Problem: "JSON", Err: err}}
	}
	var body ast.Node
	for i, d := range f.Docs {
		if d.Body == nil || isNull(d.Body) {
			continue
		}
		if i > 0 {
			return nil, fail(file, d.Body, "a second document", "the file holds one JSON object: remove what follows it")
		}
		body = d.Body
	}
	return body, checkDuplicates(file, body)
}

// The questions policy asks of the tree too.
var (
	unwrap  = yamlnode.Unwrap
	entries = yamlnode.Entries
	isNull  = yamlnode.IsNull
)

// stripComments blanks the // and /* */ comments and trailing commas of
// a JSON text (VS Code's JSONC; hujson keeps every other byte where it is,
// so lines and columns stay true). A text that is not JSON with comments is
// left alone: YAML, whose # comments the parser knows, or an error the
// parser then places.
func stripComments(data []byte) []byte {
	std, err := hujson.Standardize(bytes.Clone(data))
	if err != nil {
		return data
	}
	return std
}

// checkDuplicates refuses a key given twice in one object: JSON leaves it
// to the reader which one counts, and a setting must not hide another.
func checkDuplicates(file string, n ast.Node) error {
	switch v := unwrap(n).(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		seen := map[string]ast.Node{}
		list, _ := entries(v)
		for _, kv := range list {
			name := keyName(kv)
			if first, dup := seen[name]; dup {
				return fail(file, kv.Key, strconv.Quote(name)+" is given twice in this object (first at "+posOf(file, first).String()+")",
					"keep one of them")
			}
			seen[name] = kv.Key
			if err := checkDuplicates(file, kv.Value); err != nil {
				return err
			}
		}
	case *ast.SequenceNode:
		for _, item := range v.Values {
			if err := checkDuplicates(file, item); err != nil {
				return err
			}
		}
	}
	return nil
}

// fail is an error at n.
func fail(file string, n ast.Node, problem, fix string) error {
	return &policy.FileError{Pos: posOf(file, n), Err: &field.Error{Problem: problem, Fix: fix}}
}

// posOf is where n starts; an object at its first key, as policy places
// a mapping.
func posOf(file string, n ast.Node) policy.Pos {
	if list, ok := entries(n); ok && len(list) > 0 {
		n = list[0].Key
	}
	p := n.GetToken().Position
	return policy.Pos{File: file, Line: p.Line, Col: p.Column}
}

func keyName(kv *ast.MappingValueNode) string {
	if s, ok := unwrap(kv.Key).(*ast.StringNode); ok {
		return s.Value
	}
	return kv.Key.String()
}

// str is n's text if n is a string.
func str(n ast.Node) (string, bool) {
	switch v := unwrap(n).(type) {
	case *ast.StringNode:
		return v.Value, true
	case *ast.LiteralNode:
		return v.Value.Value, true
	}
	return "", false
}

// kind names what n is, for "must be" messages.
func kind(n ast.Node) string {
	switch unwrap(n).(type) {
	case *ast.StringNode, *ast.LiteralNode:
		return "a string"
	case *ast.IntegerNode, *ast.FloatNode:
		return "a number"
	case *ast.BoolNode:
		return "true or false"
	case *ast.NullNode:
		return "null"
	case *ast.SequenceNode:
		return "a list"
	case *ast.MappingNode, *ast.MappingValueNode:
		return "an object"
	}
	return "a value"
}
