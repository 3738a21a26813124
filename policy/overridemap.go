package policy

import (
	"strconv"

	"github.com/goccy/go-yaml/ast"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// overridesKey maps tool names to overrides in a file; each fills one
// ToolOverrides entry (TOOL=JSON, as --tool-override takes it).
const overridesKey = "pins.overrides"

const overridesExample = `e.g. pins: {overrides: {write_file: {description: "Write a file under /srv/notes.", annotations: {destructiveHint: true}}}}`

// setOverrides reads pins.overrides: TOOL: {description, annotations}.
func (d *decoder) setOverrides(k Key, n ast.Node, list *[]string) error {
	if isNull(n) {
		return nil
	}
	tools, ok := entries(n)
	if !ok {
		return d.fail(n, &field.Error{Problem: overridesKey + " must be a mapping of tool names to overrides", Fix: overridesExample})
	}
	for _, kv := range tools {
		name, _ := keyName(kv)
		if name == "" {
			return d.fail(kv.Key, &field.Error{Problem: overridesKey + ": a tool name is empty", Fix: "name the tool as the server does (before --tool-prefix)"})
		}
		o, err := d.override(name, kv)
		if err != nil {
			return err
		}
		*list = append(*list, FormatToolOverride(name, o))
	}
	d.origin[k.Field] = posOf(d.file, n)
	return nil
}

// override reads one tool's override; errors are placed at what is wrong.
func (d *decoder) override(tool string, kv *ast.MappingValueNode) (ToolOverride, error) {
	var o ToolOverride
	what := overridesKey + "." + tool
	members, ok := entries(kv.Value)
	if !ok || isNull(kv.Value) {
		return o, d.fail(kv.Key, &field.Error{Problem: what + " must be a mapping of description and annotations", Fix: overridesExample})
	}
	for _, m := range members {
		switch key, _ := keyName(m); key {
		case "description":
			s, ok := scalarOf(m.Value)
			if !ok || s.kind != "string" || s.text == "" {
				return o, d.fail(m.Value, &field.Error{Problem: what + ".description must be the text the host sees, a non-empty string", Fix: "quote it"})
			}
			o.Description = &s.text
		case "annotations":
			hints, ok := entries(m.Value)
			if !ok {
				return o, d.fail(m.Value, &field.Error{Problem: what + ".annotations must be a mapping of hints to true or false", Fix: "e.g. annotations: {destructiveHint: true}"})
			}
			o.Annotations = map[string]bool{}
			for _, h := range hints {
				hint, _ := keyName(h)
				s, ok := scalarOf(h.Value)
				if !ok || s.kind != "bool" {
					return o, d.fail(h.Value, &field.Error{Problem: what + ".annotations." + hint + " must be true or false"})
				}
				v := s.isTrue()
				if err := checkAnnotation(hint, v); err != nil {
					return o, d.fail(h.Key, &field.Error{Problem: what + ".annotations", Err: err})
				}
				o.Annotations[hint] = v
			}
		default:
			return o, d.fail(m.Key, &field.Error{Problem: "unknown key " + strconv.Quote(key) + " in " + what, Fix: "an override sets description and annotations"})
		}
	}
	if err := o.check(tool); err != nil {
		return o, d.fail(kv.Key, &field.Error{Problem: overridesKey, Err: err})
	}
	return o, nil
}
