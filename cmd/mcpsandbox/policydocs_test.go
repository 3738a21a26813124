package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policies"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// docs/policy.md has a row for every key naming its flag and its default.
func TestPolicyDocsListEveryKeyWithItsFlag(t *testing.T) {
	doc, err := os.ReadFile("../../docs/policy.md")
	if err != nil {
		t.Fatal(err)
	}
	def := policy.Default()
	for _, f := range runFlags {
		row := "| `" + policy.KeyOf(f.Field) + "` | `--" + f.Name + "` |"
		i := strings.Index(string(doc), row)
		if i < 0 {
			t.Errorf("docs/policy.md has no row %q", row)
			continue
		}
		line, _, _ := strings.Cut(string(doc[i:]), "\n")
		d := f.Value(&def).String()
		if d == "" {
			d = `""`
		}
		if !strings.HasSuffix(line, "| "+d+" |") && !(d == `""` && strings.HasSuffix(line, "| [] |")) {
			t.Errorf("docs/policy.md row %q does not end with the default %s", line, d)
		}
	}
}

var yamlBlock = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// Every YAML example of the policy docs and README.md loads and is valid.
func TestPolicyExamplesLoad(t *testing.T) {
	for _, file := range []string{"../../docs/policy.md", "../../docs/pins.md", "../../docs/server-requests.md", "../../docs/approval.md", "../../docs/secrets.md", "../../README.md"} {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		blocks := yamlBlock.FindAllSubmatch(text, -1)
		if len(blocks) == 0 {
			t.Errorf("%s has no policy example", file)
		}
		for i, b := range blocks {
			path := filepath.Join(t.TempDir(), "example.yaml")
			if err := os.WriteFile(path, b[1], 0o644); err != nil {
				t.Fatal(err)
			}
			vars := policy.Vars{Home: "/home/you", WorkDir: "/work", Args: []string{"-y", "pkg", "/home/you/notes"}, State: "/var/lib/mcpsandbox/pkg"}
			p, origin, err := policy.Loader{Builtin: policies.FS, Vars: vars}.Load(path)
			if err == nil {
				p.Command = []string{"server"}
				err = origin.Validate(&p)
			}
			if err != nil {
				t.Errorf("%s example %d: %v\n%s", file, i+1, err, b[1])
			}
		}
	}
}
