package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// details says what changed between two items of one kind and key whose
// hashes differ: counted lines make the item Changed, ignored ones do not
// (annotations moved toward safety).
func details(pinned, seen Item) (counted, ignored []string) {
	if pinned.Kind == Instructions {
		return []string{"instructions changed"}, nil
	}
	old, cur := object(pinned.Text), object(seen.Text)
	if pinned.Kind == Capabilities {
		return members("capability", old, cur), nil
	}
	d := &differ{}
	for _, field := range fieldOrder(pinned.Kind, old, cur) {
		a, b := old[field], cur[field]
		if reflect.DeepEqual(a, b) {
			continue
		}
		switch {
		case field == "description" && a == nil:
			d.count("description added")
		case field == "description":
			d.count("description changed")
		case field == "inputSchema" && pinned.Kind == Tool:
			d.count(schemaDetails("parameter", "input schema", a, b)...)
		case field == "outputSchema" && pinned.Kind == Tool:
			d.count(schemaDetails("output field", "output schema", a, b)...)
		case field == "annotations" && pinned.Kind == Tool:
			c, i := annotationDetails(a, b)
			d.count(c...)
			d.ignored = append(d.ignored, i...)
		case field == "arguments" && pinned.Kind == Prompt:
			d.count(argumentDetails(a, b)...)
		default:
			d.count(valueChange(field, a, b))
		}
	}
	return d.counted, d.ignored
}

// fieldOrder is the members of two items in the order a user reads them:
// the contract's fields first, as contractFields lists them.
func fieldOrder(kind Kind, old, cur map[string]any) []string {
	names := union(old, cur)
	rank := func(name string) int {
		if i := slices.Index(contractFields[kind], name); i >= 0 {
			return i
		}
		return len(contractFields[kind])
	}
	slices.SortStableFunc(names, func(a, b string) int { return rank(a) - rank(b) })
	return names
}

type differ struct{ counted, ignored []string }

func (d *differ) count(lines ...string) { d.counted = append(d.counted, lines...) }

// object decodes canonical text; numbers stay json.Number so that 1 and 1.0
// compare as the canonical form wrote them.
func object(text []byte) map[string]any {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	if dec.Decode(&m) != nil || m == nil {
		return map[string]any{}
	}
	return m
}

func asObject(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return m
	}
	return map[string]any{}
}

// union is the sorted names of both objects' members.
func union(a, b map[string]any) []string {
	names := make([]string, 0, len(a)+len(b))
	for k := range a {
		names = append(names, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	return names
}

// members says which members of an object were added, removed or changed.
func members(noun string, old, cur map[string]any) []string {
	var lines []string
	for _, name := range union(old, cur) {
		a, inOld := old[name]
		b, inCur := cur[name]
		switch {
		case !inOld:
			lines = append(lines, fmt.Sprintf("%s %s added", noun, quote(name)))
		case !inCur:
			lines = append(lines, fmt.Sprintf("%s %s removed", noun, quote(name)))
		case !reflect.DeepEqual(a, b):
			lines = append(lines, fmt.Sprintf("%s %s changed", noun, quote(name)))
		}
	}
	return lines
}

// schemaDetails compares two JSON Schemas of objects property by property.
func schemaDetails(noun, whole string, a, b any) []string {
	old, cur := asObject(a), asObject(b)
	oldProps, curProps := asObject(old["properties"]), asObject(cur["properties"])
	oldReq, curReq := requiredSet(old["required"]), requiredSet(cur["required"])
	var lines []string
	for _, name := range union(oldProps, curProps) {
		p, inOld := oldProps[name]
		q, inCur := curProps[name]
		switch {
		case !inOld:
			lines = append(lines, fmt.Sprintf("%s %s added (%s, %s)", noun, quote(name), typeOf(q), requiredWord(curReq[name])))
		case !inCur:
			lines = append(lines, fmt.Sprintf("%s %s removed", noun, quote(name)))
		default:
			lines = append(lines, propertyDetails(noun, name, asObject(p), asObject(q))...)
		}
		if inOld && inCur && oldReq[name] != curReq[name] {
			if curReq[name] {
				lines = append(lines, fmt.Sprintf("%s %s now required", noun, quote(name)))
			} else {
				lines = append(lines, fmt.Sprintf("%s %s no longer required", noun, quote(name)))
			}
		}
	}
	for _, field := range union(old, cur) {
		if field == "properties" || field == "required" || reflect.DeepEqual(old[field], cur[field]) {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s changed (%s)", whole, quote(field)))
	}
	if len(lines) == 0 { // required names that are no property, say
		lines = append(lines, whole+" changed")
	}
	return lines
}

func propertyDetails(noun, name string, p, q map[string]any) []string {
	var lines []string
	if tp, tq := typeOf(p), typeOf(q); tp != tq {
		lines = append(lines, fmt.Sprintf("%s %s retyped: %s → %s", noun, quote(name), tp, tq))
	}
	for _, field := range union(p, q) {
		if reflect.DeepEqual(p[field], q[field]) {
			continue
		}
		switch field {
		case "type", "items":
			if len(lines) > 0 && strings.Contains(lines[0], " retyped: ") {
				continue
			}
			if field == "type" {
				continue // same typeOf: an equal type written otherwise
			}
			lines = append(lines, fmt.Sprintf("%s %s items changed", noun, quote(name)))
		case "description":
			lines = append(lines, fmt.Sprintf("%s %s description changed", noun, quote(name)))
		default:
			lines = append(lines, fmt.Sprintf("%s %s %s", noun, quote(name), valueChange(field, p[field], q[field])))
		}
	}
	return lines
}

// typeOf names a property's type as a user reads it: string, number|null,
// array of string, enum, object.
func typeOf(v any) string {
	p := asObject(v)
	switch t := p["type"].(type) {
	case string:
		if t == "array" {
			if it := typeOf(p["items"]); it != "any" {
				return "array of " + it
			}
		}
		return t
	case []any:
		names := make([]string, 0, len(t))
		for _, x := range t {
			names = append(names, fmt.Sprint(x))
		}
		return strings.Join(names, "|")
	}
	for _, k := range []string{"enum", "const", "anyOf", "oneOf", "allOf", "$ref"} {
		if _, ok := p[k]; ok {
			return strings.TrimPrefix(k, "$")
		}
	}
	return "any"
}

func requiredSet(v any) map[string]bool {
	set := map[string]bool{}
	list, _ := v.([]any)
	for _, x := range list {
		if s, ok := x.(string); ok {
			set[s] = true
		}
	}
	return set
}

func requiredWord(required bool) string {
	if required {
		return "required"
	}
	return "optional"
}

// argumentDetails compares a prompt's arguments by name.
func argumentDetails(a, b any) []string {
	byName := func(v any) (map[string]any, []string) {
		m := map[string]any{}
		list, _ := v.([]any)
		var order []string
		for _, x := range list {
			arg := asObject(x)
			name, _ := arg["name"].(string)
			m[name] = arg
			order = append(order, name)
		}
		return m, order
	}
	old, oldOrder := byName(a)
	cur, curOrder := byName(b)
	var lines []string
	for _, name := range union(old, cur) {
		p, inOld := old[name]
		q, inCur := cur[name]
		req := func(v any) bool { r, _ := asObject(v)["required"].(bool); return r }
		switch {
		case !inOld:
			lines = append(lines, fmt.Sprintf("argument %s added (%s)", quote(name), requiredWord(req(q))))
		case !inCur:
			lines = append(lines, fmt.Sprintf("argument %s removed", quote(name)))
		default:
			for _, field := range union(asObject(p), asObject(q)) {
				pv, qv := asObject(p)[field], asObject(q)[field]
				switch {
				case reflect.DeepEqual(pv, qv):
				case field == "required" && req(q):
					lines = append(lines, fmt.Sprintf("argument %s now required", quote(name)))
				case field == "required":
					lines = append(lines, fmt.Sprintf("argument %s no longer required", quote(name)))
				case field == "description":
					lines = append(lines, fmt.Sprintf("argument %s description changed", quote(name)))
				default:
					lines = append(lines, fmt.Sprintf("argument %s %s", quote(name), valueChange(field, pv, qv)))
				}
			}
		}
	}
	if len(lines) == 0 && !slices.Equal(oldOrder, curOrder) {
		lines = append(lines, "arguments reordered")
	}
	if len(lines) == 0 {
		lines = append(lines, "arguments changed")
	}
	return lines
}

// valueChange is one field's change: `title changed: "a" → "b"`.
func valueChange(field string, a, b any) string {
	return fmt.Sprintf("%s changed: %s → %s", field, short(a), short(b))
}

// short shows a value in a detail line: quoted, at most 60 characters, and
// "(none)" when absent. A server's words are always quoted, so nothing it
// sends reads as mcpsandbox's own.
func short(v any) string {
	if v == nil {
		return "(none)"
	}
	var s string
	switch x := v.(type) {
	case string:
		return quote(x)
	case json.Number, bool:
		s = fmt.Sprint(x)
	default:
		b, _ := json.Marshal(x)
		s = string(b)
	}
	if len(s) > 60 {
		return quote(string([]rune(s)[:min(len([]rune(s)), 57)]) + "…")
	}
	return s
}

// quote quotes a server's word for a detail line: Go's quoting escapes
// controls and invisible characters; longer than 60 characters is cut.
func quote(s string) string {
	if r := []rune(s); len(r) > 60 {
		s = string(r[:57]) + "…"
	}
	return fmt.Sprintf("%q", s)
}
