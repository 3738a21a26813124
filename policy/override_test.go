package policy

import (
	"reflect"
	"strings"
	"testing"
)

// pins.overrides in a file reads as --tool-override values do; a file's
// override of a tool replaces the one of the file it extends.
func TestOverridesLoadFromAFile(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"base.yaml": "pins:\n  overrides:\n    write_file: {description: \"Writes.\"}\n    search: {annotations: {openWorldHint: true}}\n",
		"p.yaml": `extends: ./base.yaml
pins:
  overrides:
    write_file:
      description: "Write a file under /srv/notes."
      annotations: {destructiveHint: true, readOnlyHint: false}
`})
	p, _, err := load(t, dir, "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p.Command = []string{"server"}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	got, err := ParseToolOverrides(p.ToolOverrides)
	if err != nil {
		t.Fatal(err)
	}
	notes := "Write a file under /srv/notes."
	want := map[string]ToolOverride{
		"write_file": {Description: &notes, Annotations: map[string]bool{"destructiveHint": true, "readOnlyHint": false}},
		"search":     {Annotations: map[string]bool{"openWorldHint": true}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("overrides %#v\nwant %#v (from %q)", got, want, p.ToolOverrides)
	}
	if s := FormatToolOverride("write_file", want["write_file"]); s != `write_file={"description":"Write a file under /srv/notes.","annotations":{"destructiveHint":true,"readOnlyHint":false}}` {
		t.Errorf("FormatToolOverride = %s", s)
	}
}

// The flag's form is checked by Validate as the file's is.
func TestBadToolOverrideFlagsAreRefused(t *testing.T) {
	for value, want := range map[string]string{
		`write_file={"annotations":{"idempotentHint":true}}`: "idempotentHint: true would lower the risk the host sees, and an override may only raise it: use idempotentHint: false",
		`write_file={"title":"x"}`:                           `unknown field "title"`,
		`write_file`:                                         "is not TOOL=JSON",
		`write_file={"description":"a"} x`:                   "text after the JSON object",
	} {
		p := Default()
		p.Command = []string{"server"}
		p.ToolOverrides = []string{value}
		err := p.Validate()
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "ToolOverrides ") {
			t.Errorf("--tool-override %s: got %v, want ToolOverrides … %s", value, err, want)
		}
	}
}
