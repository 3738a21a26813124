package testenv

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// CheckOneAnswerEach fails t unless a relay neither lost nor duplicated a
// response: sent and answered count, per raw JSON-RPC id, the requests a
// host sent and the responses it got. Each id must have been sent once and
// answered exactly once, and no response may carry an id never sent. Call
// it once the counts are final (the connection closed).
func CheckOneAnswerEach(t testing.TB, sent, answered map[string]int) {
	t.Helper()
	if len(sent) == 0 {
		t.Fatal("no host request was recorded")
	}
	var resent, missing, duplicated, unsent []string
	for id, n := range sent {
		if n != 1 {
			resent = append(resent, fmt.Sprintf("%s (%d times)", id, n))
		}
		switch got := answered[id]; {
		case got == 0:
			missing = append(missing, id)
		case got > 1:
			duplicated = append(duplicated, fmt.Sprintf("%s (%d responses)", id, got))
		}
	}
	for id := range answered {
		if sent[id] == 0 {
			unsent = append(unsent, id)
		}
	}
	report := func(what string, ids []string) {
		if len(ids) > 0 {
			sort.Strings(ids)
			t.Errorf("%s: %s", what, strings.Join(ids, ", "))
		}
	}
	report("the host sent these request ids more than once", resent)
	report("requests never answered", missing)
	report("requests answered more than once", duplicated)
	report("responses to ids the host never sent", unsent)
}
