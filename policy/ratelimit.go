package policy

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// RateLimit is one --rate-limit: N tools/call per Per for each tool whose
// name matches Glob ("" for the default of every tool).
type RateLimit struct {
	Glob string
	N    int
	Per  time.Duration
}

// rateLimitFix is the fix every bad --rate-limit gets.
const rateLimitFix = "use N/DURATION for every tool or GLOB=N/DURATION for some, e.g. 60/1m or 'write_*=5/1m'"

// ParseRateLimit parses "N/DURATION" or "GLOB=N/DURATION"; DURATION may be
// a bare unit (10/s is 10/1s).
func ParseRateLimit(s string) (RateLimit, error) {
	var rl RateLimit
	spec := s
	if i := strings.LastIndexByte(s, '='); i >= 0 {
		rl.Glob, spec = s[:i], s[i+1:]
		if !ValidGlob(rl.Glob) {
			return rl, fmt.Errorf("%q is no glob", rl.Glob)
		}
	}
	n, per, ok := strings.Cut(spec, "/")
	if !ok {
		return rl, fmt.Errorf("%q has no /DURATION", spec)
	}
	var err error
	if rl.N, err = strconv.Atoi(n); err != nil || rl.N < 1 {
		return rl, fmt.Errorf("%q: N must be a whole number of calls, at least 1", spec)
	}
	if rl.Per, err = time.ParseDuration(per); err != nil {
		if rl.Per, err = time.ParseDuration("1" + per); err != nil {
			return rl, fmt.Errorf("%q: %q is no duration", spec, per)
		}
	}
	if rl.Per <= 0 {
		return rl, fmt.Errorf("%q: DURATION must be positive", spec)
	}
	return rl, nil
}

// String is the limit as N/DURATION.
func (rl RateLimit) String() string {
	d := rl.Per.String()
	if strings.HasSuffix(d, "m0s") {
		d = strings.TrimSuffix(d, "0s")
	}
	if strings.HasSuffix(d, "h0m") {
		d = strings.TrimSuffix(d, "0m")
	}
	return strconv.Itoa(rl.N) + "/" + d
}

// specificity orders the globs matching one tool: the one with the most
// literal characters wins; the default (no glob) loses to every glob.
func (rl RateLimit) specificity() int {
	if rl.Glob == "" {
		return -1
	}
	n := 0
	for i := 0; i < len(rl.Glob); i++ {
		switch rl.Glob[i] {
		case '*', '?':
		case '[':
			for i < len(rl.Glob) && rl.Glob[i] != ']' {
				i++
			}
		case '\\':
			i++
			n++
		default:
			n++
		}
	}
	return n
}

// RateLimitFor is the limit of tool under limits (parsed, valid): the most
// specific matching glob, a later one on a tie, else the last default; ok
// is false when none applies.
func RateLimitFor(limits []RateLimit, tool string) (best RateLimit, ok bool) {
	for _, rl := range limits {
		if rl.Glob != "" && !MatchGlob([]string{rl.Glob}, tool) {
			continue
		}
		if !ok || rl.specificity() >= best.specificity() {
			best, ok = rl, true
		}
	}
	return best, ok
}
