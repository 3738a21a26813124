package supervisor

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// budgetRelay is a relay with just the rules, its budget on a clock the
// test moves.
func budgetRelay(p policy.Policy, now *time.Time) *relay {
	r := &relay{rules: newRules(p), setting: field.Plain, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	r.rules.budget.now = func() time.Time { return *now }
	return r
}

// take asks the budget for a call of tool: the refusal (nil: let through)
// and the request, which may hold a slot.
func take(r *relay, tool string) ([]byte, *hostRequest) {
	req := &hostRequest{}
	if end, refused := r.budgetDenialLocked([]byte("1"), tool, req); refused {
		return end.answer, req
	}
	return nil, req
}

func refusalOf(t *testing.T, answer []byte) (code int, data errorData) {
	t.Helper()
	var m struct {
		Error struct {
			Code int       `json:"code"`
			Data errorData `json:"data"`
		} `json:"error"`
	}
	if answer == nil {
		return 0, data
	}
	if err := json.Unmarshal(answer, &m); err != nil {
		t.Fatalf("%s: %v", answer, err)
	}
	return m.Error.Code, m.Error.Data
}

// A token bucket per tool: N at once, then one every DURATION/N, and the
// refusal says when the next one frees up.
func TestRateLimitBucket(t *testing.T) {
	now := time.Unix(1e9, 0)
	var p policy.Policy
	p.RateLimits = []string{"3/3s"}
	r := budgetRelay(p, &now)
	for i := range 3 {
		if a, _ := take(r, "a"); a != nil {
			t.Fatalf("call %d refused: %s", i, a)
		}
	}
	a, _ := take(r, "a")
	if code, d := refusalOf(t, a); code != CodeRateLimited || d.RetryAfterMs != 1000 || d.Limit != "3/3s" {
		t.Fatalf("fourth call: %s", a)
	}
	if a, _ := take(r, "b"); a != nil {
		t.Errorf("another tool shares the budget: %s", a)
	}
	now = now.Add(400 * time.Millisecond)
	a, _ = take(r, "a")
	if _, d := refusalOf(t, a); d.RetryAfterMs != 600 {
		t.Errorf("retry after %dms, want 600 (a refusal must not take a token)", d.RetryAfterMs)
	}
	now = now.Add(600 * time.Millisecond)
	if a, _ := take(r, "a"); a != nil {
		t.Errorf("after 1s: %s", a)
	}
}

// A host calling ever new names does not grow the buckets without end,
// nor frees a tool of its limit that way: past the bound, names share.
func TestRateLimitBucketsBounded(t *testing.T) {
	now := time.Unix(1e9, 0)
	var p policy.Policy
	p.RateLimits = []string{"1/1h"}
	r := budgetRelay(p, &now)
	for i := range 2 * maxBuckets {
		take(r, fmt.Sprint("tool", i))
	}
	if n := len(r.rules.budget.buckets); n > maxBuckets {
		t.Errorf("%d buckets kept, want at most %d", n, maxBuckets)
	}
	if a, _ := take(r, "real_tool"); a == nil {
		t.Error("a tool first called past the bound went unlimited")
	}
}

// The cap counts slots until each is given back.
func TestConcurrencySlots(t *testing.T) {
	var p policy.Policy
	p.MaxConcurrentCalls = 2
	now := time.Now()
	r := budgetRelay(p, &now)
	var held []*hostRequest
	for range 2 {
		a, req := take(r, "t")
		if a != nil || !req.slot {
			t.Fatalf("within the cap: %s %v", a, req.slot)
		}
		held = append(held, req)
	}
	a, _ := take(r, "t")
	if code, d := refusalOf(t, a); code != CodeTooManyCalls || d.Limit != "2" {
		t.Fatalf("over the cap: %s", a)
	}
	r.releaseCallLocked(held[0])
	if a, _ := take(r, "t"); a != nil {
		t.Errorf("after a release: %s", a)
	}
}

func TestUncheckableURI(t *testing.T) {
	for uri, bad := range map[string]bool{
		"file:///srv/a.txt":         false,
		"demo://resource/dynamic/1": false,
		"file:///srv/a%20b":         false,
		"https://h/a?x=../y":        false,
		"file:///srv/../etc/passwd": true,
		"file:///srv/./a":           true,
		"file:///srv/..":            true,
		"file:///srv/%2E%2E/etc":    true,
		"file:///srv%2fetc":         true,
		"file:///srv\\..\\etc":      true,
		"FILE:///etc/passwd":        true,
		"res://open/1#..":           false,
	} {
		if got := uncheckableURI(uri) != ""; got != bad {
			t.Errorf("uncheckableURI(%q) = %q, want uncheckable %v", uri, uncheckableURI(uri), bad)
		}
	}
}
