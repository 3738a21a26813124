package testenv

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// DocString is the JSON string that the first submatch of pattern finds
// in the repository's doc (a path such as "docs/approval.md"), decoded:
// a test checks what a user sees against what the docs show.
func DocString(t testing.TB, doc, pattern string) string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(RepoRoot(t), doc))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(pattern).FindSubmatch(text)
	var s string
	if m == nil || json.Unmarshal(m[1], &s) != nil {
		t.Fatalf("%s shows no JSON string matching %s", doc, pattern)
	}
	return s
}
