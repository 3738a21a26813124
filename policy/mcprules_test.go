package policy

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// In a URI glob * runs across '/', so a deny rule covers every level under it.
func TestMatchURIGlob(t *testing.T) {
	for _, tc := range []struct {
		glob, uri string
		want      bool
	}{
		{"file:///srv/*", "file:///srv/a/b/c.txt", true},
		{"file:///srv/*", "file:///srv", false},
		{"file:///etc/*", "file:///srv/etc/x", false},
		{"demo://resource/static/*", "demo://resource/static/document/a.md", true},
		{"demo://*/dynamic/*", "demo://resource/dynamic/text/{resourceId}", true},
		{"*.md", "demo://x/y/a.md", true},
		{"*.md", "demo://x/y/a.mdx", false},
		{"a?c", "a/c", true},
		{"a[/]c", "a/c", true},
		{"a[^x]c", "a/c", true},
		{"a[a-z]c", "a/c", false},
		{"a\\*c", "a*c", true},
		{"a\\*c", "abc", false},
		{"x*y*z", "x/y/y/z", true},
		{"x*y*z", "x/y/z/w", false},
		{"é*", "éà/ü", true},
		{"*", "", true},
		{"?", "", false},
	} {
		if !ValidGlob(tc.glob) {
			t.Fatalf("%q is not a valid glob", tc.glob)
		}
		if got := MatchURIGlob([]string{tc.glob}, tc.uri); got != tc.want {
			t.Errorf("MatchURIGlob(%q, %q) = %v, want %v", tc.glob, tc.uri, got, tc.want)
		}
	}
}

func TestParseRateLimit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want RateLimit
		str  string
	}{
		{"60/1m", RateLimit{"", 60, time.Minute}, "60/1m"},
		{"10/s", RateLimit{"", 10, time.Second}, "10/1s"},
		{"write_*=5/1m", RateLimit{"write_*", 5, time.Minute}, "5/1m"},
		{"a=b=2/10s", RateLimit{"a=b", 2, 10 * time.Second}, "2/10s"},
		{"1/1h", RateLimit{"", 1, time.Hour}, "1/1h"},
	} {
		got, err := ParseRateLimit(tc.in)
		if err != nil || got != tc.want || got.String() != tc.str {
			t.Errorf("ParseRateLimit(%q) = %+v %q, %v; want %+v %q", tc.in, got, got.String(), err, tc.want, tc.str)
		}
	}
	for _, bad := range []string{"", "5", "0/1m", "-1/1m", "x/1m", "5/", "5/soon", "5/-1s", "5/0s", "[=5/1m"} {
		if _, err := ParseRateLimit(bad); err == nil {
			t.Errorf("ParseRateLimit(%q) accepted", bad)
		}
	}
}

// The most specific glob wins, a later one on a tie, and the default loses
// to any glob.
func TestRateLimitFor(t *testing.T) {
	var limits []RateLimit
	for _, s := range []string{"100/1m", "*=50/1m", "write_*=5/1m", "write_file=2/1m", "w*=9/1m", "200/1m"} {
		rl, err := ParseRateLimit(s)
		if err != nil {
			t.Fatal(err)
		}
		limits = append(limits, rl)
	}
	for tool, want := range map[string]int{"write_file": 2, "write_dir": 5, "wipe": 9, "read": 50} {
		if got, ok := RateLimitFor(limits, tool); !ok || got.N != want {
			t.Errorf("%s: %+v %v, want %d", tool, got, ok, want)
		}
	}
	if got, _ := RateLimitFor(limits[:1], "read"); got.N != 100 {
		t.Errorf("default: %+v", got)
	}
	if got, _ := RateLimitFor(append(limits[:1:1], limits[5]), "read"); got.N != 200 {
		t.Errorf("the later default: %+v", got)
	}
	if _, ok := RateLimitFor(limits[2:3], "read"); ok {
		t.Error("a glob that does not match applied")
	}
}

func TestValidateMCPRules(t *testing.T) {
	for _, tc := range []struct {
		set   func(*Policy)
		field string
		fix   string
	}{
		{func(p *Policy) { p.DenyPrompts = []string{"[a"} }, "DenyPrompts", "[a-z]"},
		{func(p *Policy) { p.AllowPrompts = []string{""} }, "AllowPrompts", "[a-z]"},
		{func(p *Policy) { p.AllowResources = []string{"file:///[x"} }, "AllowResources", "[a-z]"},
		{func(p *Policy) { p.DenyResources = []string{"\\"} }, "DenyResources", "[a-z]"},
		{func(p *Policy) { p.RateLimits = []string{"5 per minute"} }, "RateLimits", "e.g. 60/1m or 'write_*=5/1m'"},
		{func(p *Policy) { p.RateLimits = []string{"[=5/1m"} }, "RateLimits", "GLOB=N/DURATION"},
		{func(p *Policy) { p.MaxConcurrentCalls = -1 }, "MaxConcurrentCalls", "0 means no cap"},
	} {
		p := Default()
		p.Command = []string{"srv"}
		tc.set(&p)
		var fe *field.Error
		if err := p.Validate(); !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(fe.Fix, tc.fix) {
			t.Errorf("%s: Validate() = %v; want an error on it with fix %q", tc.field, err, tc.fix)
		}
	}
	p := Default()
	p.Command = []string{"srv"}
	p.AllowPrompts, p.DenyResources = []string{"simple-*"}, []string{"file:///etc/*"}
	p.RateLimits, p.MaxConcurrentCalls = []string{"60/1m", "write_*=5/1m"}, 4
	if err := p.Validate(); err != nil {
		t.Errorf("valid rules refused: %v", err)
	}
}
