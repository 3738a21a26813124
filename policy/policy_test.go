package policy

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
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
		// Units in any case, all binary, as 1GB always was.
		{"1GB", GiB},
		{"1gb", GiB},
		{"1Gb", GiB},
		{"1gB", GiB},
		{"2gib", 2 * GiB},
		{"2GIB", 2 * GiB},
		{"64mb", 64 * MiB},
		{"512K", 512 * KiB},
		{"512kb", 512 * KiB},
		{"100b", 100},
		{"100B", 100},
	} {
		got, err := ParseByteSize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "MiB", "12 parsecs", "1TiB", "1TB", "1e30GiB", "NaN", "infGB"} {
		_, err := ParseByteSize(bad)
		if err == nil {
			t.Errorf("ParseByteSize(%q) accepted", bad)
			continue
		}
		for _, want := range []string{"B, KiB, MiB and GiB", "any case", "GB GiB", "binary"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("ParseByteSize(%q) error %q does not say %q", bad, err, want)
			}
		}
	}
	if _, err := ParseByteSize("1TB"); err == nil || !strings.Contains(err.Error(), `"TB" is no unit of size`) {
		t.Errorf("ParseByteSize(1TB) error %v; want one naming the unit it does not know", err)
	}
	if _, err := ParseByteSize("-1MiB"); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("ParseByteSize(-1MiB) error %v; want one saying it is negative", err)
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
	var fe *field.Error
	if err := p.Validate(); !errors.As(err, &fe) || fe.Field != "Command" {
		t.Errorf("a policy without a command validated (%v); want an error naming the Command field", err)
	}
	p.Command = []string{"node", "server.js"}
	if err := p.Validate(); err != nil {
		t.Errorf("default policy with a command: %v", err)
	}
}

// Every invalid field is reported as a *field.Error naming it, so the CLI
// can name the flag (and a policy file the key) the user must change.
func TestValidateNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		field  string
		mutate func(*Policy)
	}{
		{"MaxMessage", func(p *Policy) { p.MaxMessage = 10 }},
		{"PingInterval", func(p *Policy) { p.PingInterval = -time.Second }},
		{"PingTimeout", func(p *Policy) { p.PingTimeout = 0 }},
		{"PingFailures", func(p *Policy) { p.PingFailures = 0 }},
		{"Restart", func(p *Policy) { p.Restart = "sometimes" }},
		{"RestartBackoff", func(p *Policy) { p.RestartBackoff = Backoff{Min: time.Second, Max: time.Millisecond} }},
		{"MaxRestarts", func(p *Policy) { p.MaxRestarts = -1 }},
		{"RestartWindow", func(p *Policy) { p.RestartWindow = 0 }},
		{"Grace", func(p *Policy) { p.Grace = -time.Second }},
		{"Net", func(p *Policy) { p.Net = "bridge" }},
		{"TmpSize", func(p *Policy) { p.TmpSize = 0 }},
		{"Memory", func(p *Policy) { p.Memory = -1 }},
		{"Pids", func(p *Policy) { p.Pids = -1 }},
		{"CPU", func(p *Policy) { p.CPU = -1 }},
		{"Seccomp", func(p *Policy) { p.Seccomp = "" }},
		{"NoFile", func(p *Policy) { p.NoFile = 3 }},
		{"LogLevel", func(p *Policy) { p.LogLevel = "loud" }},
		{"Env", func(p *Policy) { p.Env = []string{"=x"} }},
		{"AllowTools", func(p *Policy) { p.AllowTools = []string{"read_["} }},
		{"DenyTools", func(p *Policy) { p.DenyTools = []string{""} }},
		{"CallTimeout", func(p *Policy) { p.CallTimeout = -time.Second }},
		{"ToolPrefix", func(p *Policy) { p.ToolPrefix = "gh/" }},
		{"AuditMaxSize", func(p *Policy) { p.AuditMaxSize = -1 }},
		{"AuditMask", func(p *Policy) { p.AuditMask = []string{"pin["} }},
		{"AuditLog", func(p *Policy) { p.AuditLog, p.LogFile = "/var/log/x", "/var/log/x" }},
	} {
		p := Default()
		p.Command = []string{"server"}
		tc.mutate(&p)
		err := p.Validate()
		var fe *field.Error
		if !errors.As(err, &fe) || fe.Field != tc.field || fe.Fix == "" {
			t.Errorf("breaking %s: Validate() = %v; want a *field.Error for %s with a fix", tc.field, err, tc.field)
		}
		if strings.Contains(err.Error(), "--") {
			t.Errorf("breaking %s: %q names a command-line flag; policy names fields and the CLI renders them", tc.field, err)
		}
	}
}
