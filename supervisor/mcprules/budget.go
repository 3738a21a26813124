package mcprules

import (
	"fmt"
	"strconv"
	"time"

	"golang.org/x/time/rate"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// budget holds tools/call to --rate-limit (a token bucket per tool: N
// at once, then one more every DURATION/N) and --max-concurrent-calls (a
// call over the cap is answered at once, never queued: a queue would
// need its own bound and hold the host's calls past their deadlines). Both
// refuse before the call reaches the server, and a call refused by one
// takes nothing from the other.
type budget struct {
	limits   []policy.RateLimit               // nil: no rate limit
	buckets  map[string]*toolBucket           // by the server's tool name
	overflow map[policy.RateLimit]*toolBucket // shared by the names past maxBuckets
	sweepAt  time.Time                        // when a full map may next be swept
	maxCalls int                              // 0: no cap
	calls    int                              // tools/call registered and not yet answered
	now      func() time.Time
}

type toolBucket struct {
	lim   *rate.Limiter
	limit policy.RateLimit
}

// maxBuckets bounds the buckets kept: a host calling ever new tool names
// (answered by the server as unknown) cannot grow them without end. Full
// buckets are dropped (they are as good as new), at most once a second;
// past the bound, new names share one bucket per limit, so none goes
// unlimited.
const maxBuckets = 4096

func newBudget(specs []string, maxCalls int, now func() time.Time) *budget {
	if len(specs) == 0 && maxCalls <= 0 {
		return nil
	}
	b := &budget{maxCalls: maxCalls, now: now}
	for _, s := range specs {
		rl, err := policy.ParseRateLimit(s)
		if err != nil {
			continue // Validate refused it already
		}
		b.limits = append(b.limits, rl)
	}
	if b.limits != nil {
		b.buckets = make(map[string]*toolBucket)
		b.overflow = make(map[policy.RateLimit]*toolBucket)
	}
	return b
}

// bucket is tool's bucket, nil when no limit applies to it.
func (b *budget) bucket(tool string) *toolBucket {
	if tb, ok := b.buckets[tool]; ok {
		return tb
	}
	rl, ok := policy.RateLimitFor(b.limits, tool)
	if !ok {
		return nil
	}
	if now := b.now(); len(b.buckets) >= maxBuckets && !now.Before(b.sweepAt) {
		b.sweepAt = now.Add(time.Second)
		for name, tb := range b.buckets {
			if tb.lim.TokensAt(now) >= float64(tb.limit.N) {
				delete(b.buckets, name)
			}
		}
	}
	if len(b.buckets) >= maxBuckets {
		if tb, ok := b.overflow[rl]; ok {
			return tb
		}
		tb := newToolBucket(rl)
		b.overflow[rl] = tb
		return tb
	}
	tb := newToolBucket(rl)
	b.buckets[tool] = tb
	return tb
}

func newToolBucket(rl policy.RateLimit) *toolBucket {
	return &toolBucket{lim: rate.NewLimiter(rate.Every(rl.Per/time.Duration(rl.N)), rl.N), limit: rl}
}

// budgetDenialLocked checks a host tools/call of tool (the server's name)

// take checks a host tools/call of tool (the server's name) against the
// budget and takes its share: its refusal, or nil when c may go on (c then
// may hold a concurrency slot, given back at its End).
func (b *budget) take(s *set, tool string, c *call) *Refusal {
	if b.maxCalls > 0 && b.calls >= b.maxCalls {
		limit := strconv.Itoa(b.maxCalls)
		return &Refusal{Kind: TooManyCalls, Reason: "too many concurrent calls", Limit: limit,
			Message: fmt.Sprintf("too many concurrent calls: mcpsandbox's %s %s are in flight already; it was not relayed, retry when one is answered", s.setting("MaxConcurrentCalls"), limit)}
	}
	if b.limits != nil {
		if tb := b.bucket(tool); tb != nil {
			now := b.now()
			res := tb.lim.ReserveN(now, 1)
			if wait := res.DelayFrom(now); wait > 0 {
				res.CancelAt(now)
				wait = (wait + time.Millisecond - 1) / time.Millisecond * time.Millisecond // whole ms, rounded up
				limit := tb.limit.String()
				return &Refusal{Kind: RateLimited, Reason: "rate limited", Limit: limit, RetryAfter: wait,
					Message: fmt.Sprintf("rate limited: tool %q may be called %s under mcpsandbox's %s; it was not relayed, retry after %s", tool, limit, s.setting("RateLimits"), wait)}
			}
		}
	}
	if b.maxCalls > 0 {
		b.calls++
		c.slot = true
	}
	return nil
}
