// Package yamlnode holds the few questions package policy and package
// daemon/config both ask of goccy/go-yaml's syntax tree, which both read
// their files with to keep every node's line and column. It is a leaf of
// its own because neither may import the other's internals.
package yamlnode

import "github.com/goccy/go-yaml/ast"

// Unwrap looks through anchors (&name) and tags (!!str), which change
// nothing a file means.
func Unwrap(n ast.Node) ast.Node {
	for {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.TagNode:
			n = v.Value
		default:
			return n
		}
	}
}

// Entries returns the key-value pairs of a mapping (an object).
func Entries(n ast.Node) ([]*ast.MappingValueNode, bool) {
	switch v := Unwrap(n).(type) {
	case *ast.MappingNode:
		return v.Values, true
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{v}, true
	}
	return nil, false
}

// IsNull reports whether n is null.
func IsNull(n ast.Node) bool {
	_, ok := Unwrap(n).(*ast.NullNode)
	return ok
}
