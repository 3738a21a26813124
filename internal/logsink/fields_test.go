package logsink

import (
	"errors"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/coreos/go-systemd/v22/journal"
)

// validField is what journald keeps as a user field (journal_field_valid):
// [A-Z0-9_], 1 to 64 bytes, no leading digit, no leading '_' (the trusted
// fields only journald sets).
var validField = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,63}$`)

func TestFieldName(t *testing.T) {
	for _, c := range []struct{ key, want string }{
		{"server", "SERVER"},
		{"instance", "INSTANCE"},
		{"exit-code", "EXIT_CODE"},
		{"ping.rtt", "PING_RTT"},
		{"egress_host", "EGRESS_HOST"},
		{"müll", "M_LL"},
		{"2fa", "MCPSANDBOX_2FA"},
		{"_pid", "MCPSANDBOX__PID"},
		{"message", "MCPSANDBOX_MESSAGE"},
		{"Priority", "MCPSANDBOX_PRIORITY"},
		{"syslog_identifier", "MCPSANDBOX_SYSLOG_IDENTIFIER"},
		{"code.file", "MCPSANDBOX_CODE_FILE"},
		{"", "MCPSANDBOX_"},
		{strings.Repeat("a", 100), strings.Repeat("A", 64)},
		{"1" + strings.Repeat("a", 100), "MCPSANDBOX_1" + strings.Repeat("A", 52)},
	} {
		got := fieldName(c.key)
		if got != c.want {
			t.Errorf("fieldName(%q) = %q, want %q", c.key, got, c.want)
		}
		if !validField.MatchString(got) {
			t.Errorf("fieldName(%q) = %q, which journald would drop", c.key, got)
		}
	}
}

func TestPriority(t *testing.T) {
	for _, c := range []struct {
		level slog.Level
		want  journal.Priority
	}{
		{slog.LevelDebug - 4, journal.PriDebug},
		{slog.LevelDebug, journal.PriDebug},
		{slog.LevelInfo - 1, journal.PriDebug},
		{slog.LevelInfo, journal.PriInfo},
		{slog.LevelInfo + 2, journal.PriInfo},
		{slog.LevelWarn, journal.PriWarning},
		{slog.LevelError - 1, journal.PriWarning},
		{slog.LevelError, journal.PriErr},
		{slog.LevelError + 4, journal.PriErr},
	} {
		if got := priority(c.level); got != c.want {
			t.Errorf("priority(%v) = %d, want %d", c.level, got, c.want)
		}
	}
}

type lazy struct{}

func (lazy) LogValue() slog.Value { return slog.StringValue("resolved") }

// TestEntryFields follows a record through the handler's groups and
// attributes to the fields it would send.
func TestEntryFields(t *testing.T) {
	h := &journalHandler{fallback: slog.NewTextHandler(io.Discard, nil)}
	var sink slog.Handler = h
	sink = sink.WithAttrs([]slog.Attr{slog.String("server", "github")})
	sink = sink.WithGroup("req").WithAttrs([]slog.Attr{slog.Int("id", 7)})
	at := time.Date(2026, 7, 28, 12, 0, 0, 5, time.UTC)
	long := strings.Repeat("é", maxValue) // 2 bytes each
	r := slog.NewRecord(at, slog.LevelWarn, "slow answer", 0)
	r.AddAttrs(
		slog.String("method", "tools/call"),
		slog.Group("egress", slog.String("host", "example.com"), slog.Group("", slog.Int("port", 443))),
		slog.Group("empty"),
		slog.Any("err", errors.New("deadline exceeded")),
		slog.Time("since", at),
		slog.Any("lazy", lazy{}),
		slog.String("long", long),
		slog.Int("id", 8), // again: must not overwrite the first
		slog.String("stderr", "line 1\nline 2"),
	)
	e := sink.(*journalHandler).entry(r)
	if e.message != "slow answer" || e.priority != journal.PriWarning {
		t.Errorf("message %q priority %d, want %q %d", e.message, e.priority, "slow answer", journal.PriWarning)
	}
	want := map[string]string{
		"SYSLOG_IDENTIFIER": "mcpsandbox",
		"SERVER":            "github",
		"REQ_ID":            "7",
		"REQ_METHOD":        "tools/call",
		"REQ_EGRESS_HOST":   "example.com",
		"REQ_EGRESS_PORT":   "443",
		"REQ_ERR":           "deadline exceeded",
		"REQ_SINCE":         "2026-07-28T12:00:00.000000005Z",
		"REQ_LAZY":          "resolved",
		"REQ_ID_2":          "8",
		"REQ_STDERR":        "line 1\nline 2",
	}
	gotLong := e.vars["REQ_LONG"]
	delete(e.vars, "REQ_LONG")
	for k, v := range want {
		if e.vars[k] != v {
			t.Errorf("%s = %q, want %q", k, e.vars[k], v)
		}
	}
	for k := range e.vars {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected field %s=%q", k, e.vars[k])
		}
	}
	if len(gotLong) > maxValue || !strings.HasSuffix(gotLong, "…") || !utf8.ValidString(gotLong) ||
		!strings.HasPrefix(long, strings.TrimSuffix(gotLong, "…")) {
		t.Errorf("a %d-byte value became %d bytes ending %q; want at most %d bytes, valid UTF-8, a prefix marked with …",
			len(long), len(gotLong), gotLong[len(gotLong)-8:], maxValue)
	}
}

func TestMessageBounded(t *testing.T) {
	h := &journalHandler{fallback: slog.NewTextHandler(io.Discard, nil)}
	e := h.entry(slog.NewRecord(time.Now(), slog.LevelInfo, strings.Repeat("x", 3*maxMessage), 0))
	if len(e.message) > maxMessage || !strings.HasPrefix(e.message, strings.Repeat("x", maxMessage-len("…"))) {
		t.Errorf("a %d-byte message became %d bytes; want at most %d, cut at the end", 3*maxMessage, len(e.message), maxMessage)
	}
}
