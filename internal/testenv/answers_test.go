package testenv

import (
	"fmt"
	"strings"
	"testing"
)

// recordingTB keeps the failures instead of failing the real test.
type recordingTB struct {
	testing.TB
	failures []string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func TestCheckOneAnswerEachNamesEachBadID(t *testing.T) {
	rec := &recordingTB{TB: t}
	sent := map[string]int{`1`: 1, `2`: 1, `"a"`: 2, `4`: 1}
	answered := map[string]int{`1`: 1, `"a"`: 1, `4`: 3, `9`: 1}
	CheckOneAnswerEach(rec, sent, answered)
	got := strings.Join(rec.failures, "\n")
	for _, want := range []string{
		`sent these request ids more than once: "a" (2 times)`,
		"never answered: 2",
		"answered more than once: 4 (3 responses)",
		"never sent: 9",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("failures %q lack %q", got, want)
		}
	}
	if len(rec.failures) != 4 {
		t.Errorf("%d failures, want 4: %q", len(rec.failures), got)
	}

	rec = &recordingTB{TB: t}
	CheckOneAnswerEach(rec, map[string]int{`1`: 1}, map[string]int{`1`: 1})
	if len(rec.failures) != 0 {
		t.Errorf("one answer each: failures %q", rec.failures)
	}
}
