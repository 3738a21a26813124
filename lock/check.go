package lock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tailscale/hujson"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// shape is what the lock's JSON form allows at one place in the file.
type shape struct {
	kind   shapeKind
	fields map[string]*shape // kindObject: its members
	elem   *shape            // kindMap: each member's value
}

type shapeKind uint8

const (
	kindObject  shapeKind = iota // members named in fields
	kindMap                      // members of any name, each an elem
	kindString                   //
	kindInt                      //
	kindTime                     // an RFC 3339 string
	kindStrings                  // an array of strings
	kindJSON                     // any JSON (an item's text)
)

var (
	entryShape = &shape{kind: kindObject, fields: map[string]*shape{
		"hash": {kind: kindString}, "text": {kind: kindJSON}, "reason": {kind: kindString},
		"findings": {kind: kindStrings}, "seen": {kind: kindTime},
	}}
	entriesShape  = &shape{kind: kindMap, elem: entryShape}
	contractShape = &shape{kind: kindObject, fields: map[string]*shape{
		"tools": entriesShape, "prompts": entriesShape, "resources": entriesShape, "resourceTemplates": entriesShape,
		"instructions": entryShape, "serverInfo": entryShape, "capabilities": entryShape,
	}}
	packageShape = &shape{kind: kindObject, fields: map[string]*shape{
		"name": {kind: kindString}, "version": {kind: kindString}, "integrity": {kind: kindString},
		"registry": {kind: kindString}, "published": {kind: kindTime}, "mcpName": {kind: kindString},
		"installHosts": {kind: kindStrings},
		"provenance": {kind: kindObject, fields: map[string]*shape{
			"issuer": {kind: kindString}, "repository": {kind: kindString}, "workflow": {kind: kindString}, "commit": {kind: kindString},
		}},
	}}
	serverShape = &shape{kind: kindObject, fields: map[string]*shape{
		"name": {kind: kindString}, "mode": {kind: kindString}, "package": packageShape,
		"contract": contractShape, "pending": contractShape,
	}}
	approvalShape = &shape{kind: kindObject, fields: map[string]*shape{
		"server": {kind: kindString}, "name": {kind: kindString}, "tool": {kind: kindString},
		"digest": {kind: kindString}, "summary": {kind: kindString},
		"asked": {kind: kindTime}, "expires": {kind: kindTime}, "approved": {kind: kindTime},
	}}
	fileShape = &shape{kind: kindObject, fields: map[string]*shape{
		"version": {kind: kindInt}, "servers": {kind: kindMap, elem: serverShape},
		"approvals": {kind: kindMap, elem: approvalShape},
	}}
)

// checker walks a lock's syntax tree against its shape.
type checker struct {
	file string
	data []byte
}

func (c *checker) fail(off int, what, fix string) error {
	return errorAt(c.file, c.data, off, what, fix)
}

// check walks v, whose place in the file path names ("servers[\"x\"].contract").
func (c *checker) check(v *hujson.Value, s *shape, path string) error {
	if lit, ok := v.Value.(hujson.Literal); ok && lit.Kind() == 'n' {
		if s.kind == kindJSON {
			return nil
		}
		return c.fail(v.StartOffset, path+" is null", "give it a value or remove the member")
	}
	switch s.kind {
	case kindObject, kindMap:
		obj, ok := v.Value.(*hujson.Object)
		if !ok {
			return c.fail(v.StartOffset, path+" is "+kindName(v)+", not an object", "restore the lock from version control")
		}
		seen := map[string]int{}
		for i := range obj.Members {
			m := &obj.Members[i]
			name := m.Name.Value.(hujson.Literal).String()
			at := m.Name.StartOffset
			if first, dup := seen[name]; dup {
				return c.fail(at, fmt.Sprintf("%q is given twice in %s (first at %s)", name, orTop(path), c.pos(first)), "keep one of them")
			}
			seen[name] = at
			sub, memberPath := s.elem, fmt.Sprintf("%s[%q]", path, name)
			if s.kind == kindObject {
				sub, memberPath = s.fields[name], join(path, name)
				if sub == nil {
					return c.fail(at, fmt.Sprintf("unknown key %q in %s", name, orTop(path)), c.unknownFix(name, s))
				}
			}
			if err := c.check(&m.Value, sub, memberPath); err != nil {
				return err
			}
		}
	case kindJSON:
	case kindStrings:
		arr, ok := v.Value.(*hujson.Array)
		if !ok {
			return c.fail(v.StartOffset, path+" is "+kindName(v)+", not an array of strings", "write it as [\"…\", …]")
		}
		for i := range arr.Elements {
			if err := c.check(&arr.Elements[i], &shape{kind: kindString}, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	default:
		lit, ok := v.Value.(hujson.Literal)
		switch s.kind {
		case kindString, kindTime:
			if !ok || lit.Kind() != '"' {
				return c.fail(v.StartOffset, path+" is "+kindName(v)+", not a string", "write it in double quotes")
			}
			if s.kind == kindTime {
				if _, err := time.Parse(time.RFC3339Nano, lit.String()); err != nil {
					return c.fail(v.StartOffset, fmt.Sprintf("%s %s is not an RFC 3339 time", path, string(lit)), "write it as 2026-01-02T15:04:05Z")
				}
			}
		case kindInt:
			if !ok || lit.Kind() != '0' {
				return c.fail(v.StartOffset, path+" is "+kindName(v)+", not a number", "write it as a number")
			}
			if _, err := strconv.Atoi(string(lit)); err != nil {
				return c.fail(v.StartOffset, fmt.Sprintf("%s %s is not a whole number", path, lit), "write it as a whole number")
			}
		}
	}
	return nil
}

func (c *checker) pos(off int) string {
	e := errorAt(c.file, c.data, off, "", "")
	return fmt.Sprintf("%d:%d", e.Line, e.Col)
}

// unknownFix names the closest known key, or every key.
func (c *checker) unknownFix(name string, s *shape) string {
	known := make([]string, 0, len(s.fields))
	for k := range s.fields {
		known = append(known, k)
	}
	slices.Sort(known)
	best, bestD := "", 3
	for _, k := range known {
		if d := field.EditDistance(strings.ToLower(name), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	if best != "" {
		return fmt.Sprintf("did you mean %q? (known keys: %s)", best, strings.Join(known, ", "))
	}
	return "remove it, or use one of the known keys: " + strings.Join(known, ", ")
}

func kindName(v *hujson.Value) string {
	switch x := v.Value.(type) {
	case *hujson.Object:
		return "an object"
	case *hujson.Array:
		return "an array"
	case hujson.Literal:
		switch x.Kind() {
		case '"':
			return "a string"
		case '0':
			return "a number"
		case 't', 'f':
			return "a boolean"
		}
	}
	return "null"
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func orTop(path string) string {
	if path == "" {
		return "the lock"
	}
	return path
}

// member is the member of object v named name, nil when there is none.
func member(v *hujson.Value, name string) *hujson.ObjectMember {
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil
	}
	for i := range obj.Members {
		if obj.Members[i].Name.Value.(hujson.Literal).String() == name {
			return &obj.Members[i]
		}
	}
	return nil
}

// syntaxOffset is where the standard decoder found data not to be JSON.
func syntaxOffset(data []byte) (int, string, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var v json.RawMessage
	err := dec.Decode(&v)
	if err == nil {
		rest := int(dec.InputOffset())
		if extra := bytes.TrimLeft(data[rest:], " \t\r\n"); len(extra) > 0 {
			return len(data) - len(extra), "more after the lock's object", true
		}
		return 0, "", false
	}
	if se, ok := err.(*json.SyntaxError); ok {
		return int(se.Offset) - 1, se.Error(), true
	}
	return len(data), "the file ends inside a value", true
}
