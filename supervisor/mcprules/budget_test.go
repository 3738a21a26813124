package mcprules

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// budgetRules are the rules of p, their budget on a clock the test moves.
func budgetRules(p policy.Policy, now *time.Time) Rules {
	return New(p, Options{Now: func() time.Time { return *now }})
}

// callTool asks the rules about a host tools/call of tool.
func callTool(t *testing.T, ru Rules, tool string) (*Refusal, Call) {
	t.Helper()
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":` + fmt.Sprintf("%q", tool) + `,"arguments":{}}}`)
	var sc jsonrpc.Scanner
	var b jsonrpc.Batch
	if err := sc.Scan(msg, &b); err != nil {
		t.Fatal(err)
	}
	v, c := ru.HostRequest(msg, &b.Msgs[0])
	return v.Refusal, c
}

// A token bucket per tool: N at once, then one every DURATION/N, and the
// refusal says when the next one frees up.
func TestRateLimitBucket(t *testing.T) {
	now := time.Unix(1e9, 0)
	var p policy.Policy
	p.RateLimits = []string{"3/3s"}
	ru := budgetRules(p, &now)
	for i := range 3 {
		if ref, _ := callTool(t, ru, "a"); ref != nil {
			t.Fatalf("call %d refused: %+v", i, ref)
		}
	}
	ref, _ := callTool(t, ru, "a")
	if ref == nil || ref.Kind != RateLimited || ref.RetryAfter != time.Second || ref.Limit != "3/3s" {
		t.Fatalf("fourth call: %+v", ref)
	}
	if ref, _ := callTool(t, ru, "b"); ref != nil {
		t.Errorf("another tool shares the budget: %+v", ref)
	}
	now = now.Add(400 * time.Millisecond)
	if ref, _ = callTool(t, ru, "a"); ref == nil || ref.RetryAfter != 600*time.Millisecond {
		t.Errorf("refusal %+v, want a retry after 600ms (a refusal must not take a token)", ref)
	}
	now = now.Add(600 * time.Millisecond)
	if ref, _ := callTool(t, ru, "a"); ref != nil {
		t.Errorf("after 1s: %+v", ref)
	}
}

// A host calling ever new names does not grow the buckets without end,
// nor frees a tool of its limit that way: past the bound, names share.
func TestRateLimitBucketsBounded(t *testing.T) {
	now := time.Unix(1e9, 0)
	var p policy.Policy
	p.RateLimits = []string{"1/1h"}
	ru := budgetRules(p, &now)
	for i := range 2 * maxBuckets {
		callTool(t, ru, fmt.Sprint("tool", i))
	}
	if n := len(ru.(*set).budget.buckets); n > maxBuckets {
		t.Errorf("%d buckets kept, want at most %d", n, maxBuckets)
	}
	if ref, _ := callTool(t, ru, "real_tool"); ref == nil {
		t.Error("a tool first called past the bound went unlimited")
	}
}

// The cap counts calls until each ends, and a refused call holds nothing.
func TestConcurrencySlots(t *testing.T) {
	var p policy.Policy
	p.MaxConcurrentCalls = 2
	now := time.Now()
	ru := budgetRules(p, &now)
	var held []Call
	for range 2 {
		ref, c := callTool(t, ru, "t")
		if ref != nil || c == nil {
			t.Fatalf("within the cap: %+v %v", ref, c)
		}
		held = append(held, c)
	}
	ref, c := callTool(t, ru, "t")
	if ref == nil || ref.Kind != TooManyCalls || ref.Limit != "2" || c != nil {
		t.Fatalf("over the cap: %+v", ref)
	}
	held[0].End()
	if ref, _ := callTool(t, ru, "t"); ref != nil {
		t.Errorf("after a call ended: %+v", ref)
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

// No rule set: no rules at all, so the relay takes no step for them. The
// secret scan is on by default, so only --no-secret-scan leaves none.
func TestNoRulesIsNil(t *testing.T) {
	p := policy.Default()
	if New(p, Options{}) == nil {
		t.Errorf("the default policy has no rules: its secret scan is off")
	}
	p.NoSecretScan = true
	if ru := New(p, Options{}); ru != nil {
		t.Errorf("the default policy under --no-secret-scan has rules: %#v", ru)
	}
}
