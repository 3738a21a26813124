package supervisor

import (
	"testing"
	"time"
)

// A restart has at least three times the slowest start of the session to
// answer the replayed initialize, never less than 30 s, never more than
// 5 minutes.
func TestReplayWaitFollowsTheSlowestStart(t *testing.T) {
	r := &relay{}
	for _, c := range []struct {
		took, want time.Duration
	}{
		{0, replayTimeout},
		{2 * time.Second, replayTimeout},
		{20 * time.Second, time.Minute},
		{5 * time.Second, time.Minute}, // a quicker start later does not shorten it
		{10 * time.Minute, replayWaitMax},
	} {
		if c.took > 0 {
			r.noteStartTook(c.took)
		}
		if got := r.replayWait(); got != c.want {
			t.Errorf("after a start of %s: %s, want %s", c.took, got, c.want)
		}
	}
}
