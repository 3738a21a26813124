package policy

import (
	"strings"
	"testing"
	"time"
)

func TestParseByteSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ByteSize
	}{
		{"4096", 4096},
		{"64MiB", 64 * MiB},
		{"64M", 64 * MiB},
		{"1GiB", GiB},
		{"1.5GiB", GiB + GiB/2},
		{"512k", 512 * KiB},
		{" 16MiB ", 16 * MiB},
	} {
		got, err := ParseByteSize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "MiB", "-1MiB", "12 parsecs", "1TiB"} {
		if _, err := ParseByteSize(bad); err == nil || !strings.Contains(err.Error(), "MiB") {
			t.Errorf("ParseByteSize(%q) error %v; want one naming the accepted suffixes", bad, err)
		}
	}
}

func TestByteSizeStringRoundTrips(t *testing.T) {
	for _, b := range []ByteSize{0, 1000, KiB, 3 * MiB, 16 * MiB, 2 * GiB} {
		back, err := ParseByteSize(b.String())
		if err != nil || back != b {
			t.Errorf("%d printed as %q parses back as %d, %v", b, b.String(), back, err)
		}
	}
}

func TestParseBackoff(t *testing.T) {
	got, err := ParseBackoff("100ms..30s")
	if err != nil || got != (Backoff{100 * time.Millisecond, 30 * time.Second}) {
		t.Fatalf("ParseBackoff = %v, %v", got, err)
	}
	if back, _ := ParseBackoff(got.String()); back != got {
		t.Errorf("%v does not round-trip through String: %v", got, back)
	}
	for _, bad := range []string{"100ms", "100ms-30s", "x..30s", "100ms..y"} {
		if _, err := ParseBackoff(bad); err == nil {
			t.Errorf("ParseBackoff(%q) accepted", bad)
		}
	}
}

func TestDefaultIsValidOnceItHasACommand(t *testing.T) {
	p := Default()
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "--") {
		t.Errorf("a policy without a command validated (%v); want an error showing where the command goes", err)
	}
	p.Command = []string{"node", "server.js"}
	if err := p.Validate(); err != nil {
		t.Errorf("default policy with a command: %v", err)
	}
}

// Every invalid field is reported with the flag that sets it, so the user
// knows what to change.
func TestValidateNamesTheFlag(t *testing.T) {
	for _, tc := range []struct {
		flag   string
		mutate func(*Policy)
	}{
		{"--max-message", func(p *Policy) { p.MaxMessage = 10 }},
		{"--ping-timeout", func(p *Policy) { p.PingTimeout = 0 }},
		{"--ping-failures", func(p *Policy) { p.PingFailures = 0 }},
		{"--restart", func(p *Policy) { p.Restart = "sometimes" }},
		{"--restart-backoff", func(p *Policy) { p.RestartBackoff = Backoff{Min: time.Second, Max: time.Millisecond} }},
		{"--max-restarts", func(p *Policy) { p.MaxRestarts = -1 }},
		{"--restart-window", func(p *Policy) { p.RestartWindow = 0 }},
		{"--grace", func(p *Policy) { p.Grace = -time.Second }},
		{"--net", func(p *Policy) { p.Net = "bridge" }},
		{"--tmp-size", func(p *Policy) { p.TmpSize = 0 }},
		{"--memory", func(p *Policy) { p.Memory = -1 }},
		{"--seccomp", func(p *Policy) { p.Seccomp = "" }},
		{"--nofile", func(p *Policy) { p.NoFile = 3 }},
		{"--log-level", func(p *Policy) { p.LogLevel = "loud" }},
		{"--env", func(p *Policy) { p.Env = []string{"=x"} }},
	} {
		p := Default()
		p.Command = []string{"server"}
		tc.mutate(&p)
		err := p.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("breaking %s: Validate() = %v; want an error naming %s", tc.flag, err, tc.flag)
		}
	}
}
