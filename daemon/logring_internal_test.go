package daemon

import (
	"log/slog"
	"strings"
	"testing"
)

// A server's ring keeps its last records, bounded in number and bytes
// however much it is fed; records of other servers and of none stay out.
func TestLogRingIsBounded(t *testing.T) {
	rings := newLogRings()
	log := slog.New(newRingHandler(slog.DiscardHandler, rings))
	srv := log.With("server", "flood", "instance", "flood#1")
	for i := range 5000 {
		srv.Info("server stderr", "line", i)
	}
	log.Info("about another", "server", "other")
	log.Info("about none")
	lines, _ := rings.lines("flood", false)
	if len(lines) != ringRecords || !strings.Contains(lines[len(lines)-1], "line=4999") || !strings.Contains(lines[0], "line=4000") {
		t.Errorf("%d records kept, from %q to %q", len(lines), lines[0], lines[len(lines)-1])
	}
	if !strings.Contains(lines[0], "instance=flood#1") {
		t.Errorf("a record without its instance: %q", lines[0])
	}
	big := strings.Repeat("x", 64<<10)
	for range 100 {
		srv.Info("server stderr", "line", big)
	}
	lines, _ = rings.lines("flood", false)
	size := 0
	for _, l := range lines {
		size += len(l)
	}
	if size > ringBytes || len(lines) < 10 {
		t.Errorf("%d records of %d bytes kept, bound %d bytes", len(lines), size, ringBytes)
	}
	if other, _ := rings.lines("other", false); len(other) != 1 {
		t.Errorf("other's ring: %q", other)
	}
	// A follower that does not read loses records, counted; logging goes on.
	_, f := rings.lines("flood", true)
	for range followBuffer + 10 {
		srv.Info("more")
	}
	if n := rings.takeDropped(f); n != 10 {
		t.Errorf("%d records dropped for the slow follower, want 10", n)
	}
}
