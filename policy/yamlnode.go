package policy

import (
	"github.com/goccy/go-yaml/ast"

	"github.com/mcpsandbox/mcpsandbox/internal/yamlnode"
)

// Shared with daemon/config, which reads its file the same way.
var (
	unwrap  = yamlnode.Unwrap
	entries = yamlnode.Entries
	isNull  = yamlnode.IsNull
)

// The YAML nodes of a policy file as the decoder needs them. goccy/go-yaml
// is used because its AST keeps the line and column of every node, and its
// syntax errors carry one too (go.yaml.in/yaml/v3 gives syntax errors a line
// only): every error here can point at file:line:col.

// scalar is a plain value and the YAML type it was written as.
type scalar struct {
	text string
	kind string // "string", "int", "float", "bool", "null"
}

// isTrue is a bool scalar's value: the YAML 1.2 core schema spells true
// three ways.
func (s scalar) isTrue() bool { return s.text == "true" || s.text == "True" || s.text == "TRUE" }

// scalarOf returns n's value if n is a scalar.
func scalarOf(n ast.Node) (scalar, bool) {
	switch v := unwrap(n).(type) {
	case *ast.StringNode:
		return scalar{v.Value, "string"}, true
	case *ast.LiteralNode:
		return scalar{v.Value.Value, "string"}, true
	case *ast.IntegerNode:
		return scalar{v.Token.Value, "int"}, true
	case *ast.FloatNode:
		return scalar{v.Token.Value, "float"}, true
	case *ast.InfinityNode:
		return scalar{v.Token.Value, "float"}, true
	case *ast.NanNode:
		return scalar{v.Token.Value, "float"}, true
	case *ast.BoolNode:
		return scalar{v.Token.Value, "bool"}, true
	case *ast.NullNode:
		return scalar{"", "null"}, true
	}
	return scalar{}, false
}

// keyName is a mapping key's text; ok is false for keys that are no plain
// string (a number, a merge key <<, a complex key).
func keyName(kv *ast.MappingValueNode) (string, bool) {
	if s, ok := unwrap(kv.Key).(*ast.StringNode); ok {
		return s.Value, true
	}
	return kv.Key.String(), false
}
