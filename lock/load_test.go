package lock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pos is "FILE:LINE:COL" of byte off of text: where an editor puts a user
// who jumps to the error.
func pos(file, text string, off int) string {
	line := strings.Count(text[:off], "\n") + 1
	col := len([]rune(text[strings.LastIndex(text[:off], "\n")+1:off])) + 1
	return fmt.Sprintf("%s:%d:%d", file, line, col)
}

// first places an error at the first needle.
func first(needle string) func(string) int {
	return func(s string) int { return strings.Index(s, needle) }
}

func end(s string) int { return len(s) }

func TestHandEditedLocksAreRefusedInPlace(t *testing.T) {
	good := string(sample(t).Marshal())
	fsTools := strings.Index(good, `"npm+@modelcontextprotocol+server-filesystem"`)
	approvedWrite := fsTools + strings.Index(good[fsTools:], `"write_file": {`)
	hashAt := approvedWrite + strings.Index(good[approvedWrite:], `"sha256:`)
	oldHash := good[hashAt+1 : hashAt+1+len("sha256:")+64]

	cases := []struct {
		name  string
		edit  func(string) string
		place func(edited string) int // the offset the error points at
		want  string                  // the message after FILE:LINE:COL:
	}{
		{"a comma left out", func(s string) string { return strings.Replace(s, `"version": 1,`, `"version": 1`, 1) },
			first(`"servers"`), `not JSON: invalid character '"' after object key:value pair: fix the JSON syntax at this place (mcpsandbox never rewrites a lock it cannot read)`},
		{"cut short", func(s string) string { return s[:len(s)/2] },
			end, `not JSON: the file ends inside a value: fix the JSON syntax at this place (mcpsandbox never rewrites a lock it cannot read)`},
		{"more after the object", func(s string) string { return s + "}\n" },
			func(s string) int { return len(s) - 2 }, `not JSON: more after the lock's object: fix the JSON syntax at this place (mcpsandbox never rewrites a lock it cannot read)`},
		{"a hash edited", func(s string) string {
			return s[:hashAt] + strings.Replace(s[hashAt:], oldHash, "sha256:"+strings.Repeat("0", 64), 1)
		}, first(`"sha256:` + strings.Repeat("0", 64)),
			`servers["npm+@modelcontextprotocol+server-filesystem"].contract.tools["write_file"].hash sha256:` + strings.Repeat("0", 64) +
				` does not match its text, which hashes to ` + oldHash + `: ` + restoreFix + ` (an approved text is changed by mcpsandbox pins approve, never by hand)`},
		{"a text edited", func(s string) string {
			return s[:approvedWrite] + strings.Replace(s[approvedWrite:], "Use with caution", "Use freely", 1)
		}, first(`"` + oldHash),
			`servers["npm+@modelcontextprotocol+server-filesystem"].contract.tools["write_file"].hash ` + oldHash +
				` does not match its text, which hashes to sha256:`},
		{"a key renamed alone", func(s string) string {
			return s[:approvedWrite] + strings.Replace(s[approvedWrite:], `"write_file": {`, `"write_files": {`, 1)
		}, first(`"write_files"`),
			`servers["npm+@modelcontextprotocol+server-filesystem"].contract.tools["write_files"]: the key "write_files" does not match its text, which names "write_file": ` + restoreFix + ` (a key and its text are renamed together, never one alone)`},
		{"an unknown key", func(s string) string { return strings.Replace(s, `"mode": "tofu"`, `"mdoe": "tofu"`, 1) },
			first(`"mdoe"`), `unknown key "mdoe" in servers["npm+@modelcontextprotocol+server-filesystem"]: did you mean "mode"? (known keys: contract, mode, name, package, pending)`},
		{"an unknown key at the top", func(s string) string {
			return strings.Replace(s, `"version": 1,`, `"version": 1, "approved": true,`, 1)
		},
			first(`"approved"`), `unknown key "approved" in the lock: remove it, or use one of the known keys: approvals, servers, version`},
		{"version 2", func(s string) string { return strings.Replace(s, `"version": 1,`, `"version": 2,`, 1) },
			first(`2,`), `version 2 is not one this mcpsandbox reads (it reads version 1): write "version": 1 if the file is in version 1's form, or use the mcpsandbox that wrote it`},
		{"a version as a string", func(s string) string { return strings.Replace(s, `"version": 1,`, `"version": "1",`, 1) },
			first(`"1"`), `version is a string, not a number: write it as a number`},
		{"a time that is none", func(s string) string { return strings.Replace(s, `"2026-12-05T01:02:03Z"`, `"yesterday"`, 1) },
			first(`"yesterday"`), `servers["npm+@modelcontextprotocol+server-filesystem"].pending.tools["write_file"].seen "yesterday" is not an RFC 3339 time: write it as 2026-01-02T15:04:05Z`},
		{"a key given twice", func(s string) string {
			return strings.Replace(s, `"mode": "tofu",`, `"mode": "tofu", "mode": "off",`, 1)
		},
			first(`"mode": "off"`), `"mode" is given twice in servers["npm+@modelcontextprotocol+server-filesystem"] (first at `},
		{"an empty file", func(string) string { return "" },
			func(string) int { return 0 }, `the lock is empty: delete the file to start a new lock, or restore it from version control`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			edited := c.edit(good)
			path := writeFile(t, []byte(edited))
			_, err := Load(path)
			var le *Error
			if !errors.As(err, &le) {
				t.Fatalf("Load = %v, want a *lock.Error", err)
			}
			if want, got := pos(path, edited, c.place(edited)), fmt.Sprintf("%s:%d:%d", le.File, le.Line, le.Col); got != want {
				t.Errorf("placed at %s, want %s", got, want)
			}
			if !strings.HasPrefix(err.Error(), fmt.Sprintf("%s:%d:%d: %s", path, le.Line, le.Col, c.want)) {
				t.Errorf("error:\n%v\nwant after FILE:LINE:COL:\n%s", err, c.want)
			}
			if got, _ := os.ReadFile(path); string(got) != edited {
				t.Error("Load changed the file")
			}
		})
	}
}

func TestMissingLockIsEmpty(t *testing.T) {
	f, err := Load(filepath.Join(t.TempDir(), "none", "lock.json"))
	if err != nil || f.Version != 1 || len(f.Servers) != 0 {
		t.Errorf("Load of a missing file = %+v, %v; want an empty lock", f, err)
	}
	if got := string(f.Marshal()); got != "{\n  \"version\": 1,\n  \"servers\": {}\n}\n" {
		t.Errorf("an empty lock marshals as %q", got)
	}
}
