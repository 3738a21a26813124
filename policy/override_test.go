package policy

import (
	"errors"
	"path/filepath"
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

// A bad override is refused at file:line:col, naming the fix; an
// annotation that lowers risk names the value that would raise it.
func TestBadOverridesSayWhereAndWhatToDo(t *testing.T) {
	for _, tc := range []struct {
		name, file, at string
		want           []string
	}{
		{"lowers risk", "pins:\n  overrides:\n    write_file: {annotations: {readOnlyHint: true}}\n", "p.yaml:3:32",
			[]string{"pins.overrides.write_file.annotations", "readOnlyHint: true would lower the risk the host sees", "use readOnlyHint: false"}},
		{"calls a tool safe", "pins:\n  overrides:\n    rm: {annotations: {destructiveHint: false}}\n", "p.yaml:3:24",
			[]string{"destructiveHint: false would lower the risk", "use destructiveHint: true"}},
		{"unknown hint", "pins:\n  overrides:\n    rm: {annotations: {dangerous: true}}\n", "p.yaml:3:24",
			[]string{`"dangerous" is no annotation an override may set`, "readOnlyHint, destructiveHint, idempotentHint, openWorldHint"}},
		{"hint not a boolean", "pins:\n  overrides:\n    rm: {annotations: {destructiveHint: yes}}\n", "p.yaml:3:41",
			[]string{"pins.overrides.rm.annotations.destructiveHint must be true or false"}},
		{"unknown key", "pins:\n  overrides:\n    rm: {title: Remove}\n", "p.yaml:3:10",
			[]string{`unknown key "title" in pins.overrides.rm`, "an override sets description and annotations"}},
		{"sets nothing", "pins:\n  overrides:\n    rm: {annotations: {}}\n", "p.yaml:3:5",
			[]string{`tool "rm": the override sets nothing`}},
		{"empty description", "pins:\n  overrides:\n    rm: {description: \"\"}\n", "p.yaml:3:23",
			[]string{"pins.overrides.rm.description must be the text the host sees, a non-empty string"}},
		{"not a mapping", "pins:\n  overrides: [rm]\n", "p.yaml:2:14",
			[]string{"pins.overrides must be a mapping of tool names to overrides", "annotations: {destructiveHint: true}"}},
		{"a tool without a mapping", "pins:\n  overrides:\n    rm: Removes.\n", "p.yaml:3:5",
			[]string{"pins.overrides.rm must be a mapping of description and annotations"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"p.yaml": tc.file})
			_, _, err := load(t, dir, "p.yaml")
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("got %v (%T), want a *FileError", err, err)
			}
			msg := err.Error()
			if at := filepath.Join(dir, tc.at) + ": "; !strings.HasPrefix(msg, at) {
				t.Errorf("error %q\ndoes not start with %q", msg, at)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q\nlacks %q", msg, w)
				}
			}
		})
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
