package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ToolOverride is the operator's word on one tool, over the server's: the
// description the host sees instead of the server's, and annotations
// raised toward risk. What it sets is what the host sees and what the
// lock pins.
type ToolOverride struct {
	Description *string         `json:"description,omitempty"`
	Annotations map[string]bool `json:"annotations,omitempty"`
}

// riskyHint is, per annotation an override may set, the value that
// raises the risk the host sees (MCP's defaults are the risky ones: a
// tool says it is safe, never that it is dangerous).
var riskyHint = map[string]bool{
	"readOnlyHint":    false,
	"destructiveHint": true,
	"idempotentHint":  false,
	"openWorldHint":   true,
}

// annotationNames lists riskyHint's keys in the docs' order.
var annotationNames = []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}

// toolOverrideFix is the syntax, for errors' fixes.
const toolOverrideFix = `e.g. write_file={"description":"Write a file under /srv/notes.","annotations":{"destructiveHint":true}}`

// checkAnnotation refuses an unknown hint and a value that lowers risk.
func checkAnnotation(name string, value bool) error {
	risky, known := riskyHint[name]
	switch {
	case !known:
		return fmt.Errorf("%q is no annotation an override may set: use %s", name, strings.Join(annotationNames, ", "))
	case value != risky:
		return fmt.Errorf("%s: %v would lower the risk the host sees, and an override may only raise it: use %s: %v, or leave the server's", name, value, name, risky)
	}
	return nil
}

// FormatToolOverride is one --tool-override value: NAME=JSON.
func FormatToolOverride(name string, o ToolOverride) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(o) // a string and a map of bools always encode
	return name + "=" + strings.TrimSuffix(b.String(), "\n")
}

// ParseToolOverride reads one --tool-override value: NAME=JSON, the JSON
// an object of description (a string) and annotations (hints raised).
func ParseToolOverride(s string) (name string, o ToolOverride, err error) {
	name, text, ok := strings.Cut(s, "=")
	if !ok || name == "" || !strings.HasPrefix(strings.TrimSpace(text), "{") {
		return "", o, fmt.Errorf("is not TOOL=JSON (%s)", toolOverrideFix)
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return "", o, fmt.Errorf("tool %q: %v: the JSON takes description and annotations (%s)", name, err, toolOverrideFix)
	}
	if dec.More() {
		return "", o, fmt.Errorf("tool %q: text after the JSON object", name)
	}
	return name, o, o.check(name)
}

// check is what both forms (file and flag) refuse.
func (o ToolOverride) check(name string) error {
	if o.Description == nil && len(o.Annotations) == 0 {
		return fmt.Errorf("tool %q: the override sets nothing: give description or annotations", name)
	}
	if o.Description != nil && strings.TrimSpace(*o.Description) == "" {
		return fmt.Errorf("tool %q: the description is empty: give the text the host should see, or leave the server's out of the override", name)
	}
	names := make([]string, 0, len(o.Annotations))
	for n := range o.Annotations {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := checkAnnotation(n, o.Annotations[n]); err != nil {
			return fmt.Errorf("tool %q: %v", name, err)
		}
	}
	return nil
}

// ParseToolOverrides reads a policy's ToolOverrides by tool; a later
// value for a tool replaces an earlier one (a file's over the file it
// extends, a flag's over the file's).
func ParseToolOverrides(list []string) (map[string]ToolOverride, error) {
	if len(list) == 0 {
		return nil, nil
	}
	out := make(map[string]ToolOverride, len(list))
	for _, s := range list {
		name, o, err := ParseToolOverride(s)
		if err != nil {
			return nil, fmt.Errorf("%s %w", strconv.Quote(s), err)
		}
		out[name] = o
	}
	return out, nil
}
