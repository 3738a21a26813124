package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// overridesSection is docs/pins.md's Overrides section.
func overridesSection(t *testing.T) string {
	t.Helper()
	text, err := os.ReadFile("../../docs/pins.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(text), "\n## Overrides\n")
	if !ok {
		t.Fatal("docs/pins.md has no Overrides section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	return section
}

var toolOverrideFlag = regexp.MustCompile(`--tool-override '([a-z_]+=\{[^']*)'`)

// docs/pins.md's overrides work as written: its flag's value is taken by
// run, and its file, had it lowered a risk, is refused with the line the
// page shows.
func TestOverrideDocsWorkAsWritten(t *testing.T) {
	section := overridesSection(t)
	m := toolOverrideFlag.FindStringSubmatch(section)
	if m == nil {
		t.Fatal("docs/pins.md's Overrides section has no --tool-override example")
	}
	line := []string{"--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv/notes"}
	p, stderr, ok := settle(t, append([]string{"--tool-override", m[1]}, line...)...)
	if !ok {
		t.Fatalf("run refused --tool-override %s: %s", m[1], stderr)
	}
	if o, err := policy.ParseToolOverrides(p.ToolOverrides); err != nil || !o["write_file"].Annotations["destructiveHint"] {
		t.Errorf("--tool-override %s read as %v (%v)", m[1], o, err)
	}

	yaml := yamlBlock.FindStringSubmatch(section)
	text := regexp.MustCompile("(?s)```text\n(.*?)\n```").FindStringSubmatch(section)
	if yaml == nil || text == nil {
		t.Fatal("docs/pins.md's Overrides section lacks its file or its error")
	}
	lowered := strings.Replace(yaml[1], "destructiveHint: true", "readOnlyHint: true", 1)
	file := filepath.Join(t.TempDir(), "notes.yaml")
	if err := os.WriteFile(file, []byte(lowered), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, ok = settle(t, append([]string{"--policy", file}, line...)...)
	if want := strings.Replace(text[1], "notes.yaml", file, 1); ok || !strings.Contains(stderr, want) {
		t.Errorf("a file lowering a risk: run said (ok %v)\n%s\nwant, as docs/pins.md shows,\n%s", ok, stderr, want)
	}
}
