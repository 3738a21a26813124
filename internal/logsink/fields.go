package logsink

import (
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coreos/go-systemd/v22/journal"
)

const (
	// identifier is SYSLOG_IDENTIFIER: `journalctl -t mcpsandbox` finds the daemon's records.
	identifier = "mcpsandbox"
	// reservedPrefix goes before a name the journal would drop or read as its own.
	reservedPrefix = "MCPSANDBOX_"
	// maxName is the journal's limit on a field name; a longer one is dropped by journald.
	maxName = 64
	// maxValue bounds each attribute's text, so one huge value cannot bloat every record.
	maxValue = 4 << 10
	// maxMessage bounds MESSAGE; a stack trace still fits.
	maxMessage = 64 << 10
)

// reserved are the user fields the journal gives a meaning of its own
// (systemd.journal-fields(7)); an attribute of that name would change how
// the record is shown or filtered, so it gets reservedPrefix.
var reserved = map[string]bool{
	"MESSAGE": true, "MESSAGE_ID": true, "PRIORITY": true,
	"CODE_FILE": true, "CODE_LINE": true, "CODE_FUNC": true, "ERRNO": true,
	"INVOCATION_ID": true, "USER_INVOCATION_ID": true,
	"SYSLOG_FACILITY": true, "SYSLOG_IDENTIFIER": true, "SYSLOG_PID": true,
	"SYSLOG_TIMESTAMP": true, "SYSLOG_RAW": true,
	"DOCUMENTATION": true, "TID": true, "UNIT": true, "USER_UNIT": true,
	"OBJECT_PID": true, "COREDUMP_UNIT": true, "COREDUMP_USER_UNIT": true,
}

// fieldName turns an attribute's key (its groups joined with '_') into a
// journal field name: upper case, [A-Z0-9_] only, not starting with a digit
// or '_' (journald drops those: '_' marks the fields only it may set), not
// one the journal reserves, at most maxName bytes.
func fieldName(key string) string {
	var b strings.Builder
	b.Grow(len(key))
	for _, c := range strings.ToUpper(key) {
		if c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	name := b.String()
	if name == "" || name[0] == '_' || name[0] >= '0' && name[0] <= '9' || reserved[name] {
		name = reservedPrefix + name
	}
	if len(name) > maxName {
		name = name[:maxName]
	}
	return name
}

// uniqueName is name, or name with _2, _3 … when an earlier attribute of
// the record took it (journal.Send takes a map: a repeated key must not
// overwrite the first).
func uniqueName(name string, taken map[string]string) string {
	if _, ok := taken[name]; !ok {
		return name
	}
	for n := 2; ; n++ {
		suffix := "_" + strconv.Itoa(n)
		base := name
		if len(base)+len(suffix) > maxName {
			base = base[:maxName-len(suffix)]
		}
		if _, ok := taken[base+suffix]; !ok {
			return base + suffix
		}
	}
}

// valueText is an attribute's value as the journal stores it: text, as
// slog's text handler would show it (times in RFC 3339), bounded.
func valueText(v slog.Value) string {
	var s string
	if v.Kind() == slog.KindTime {
		s = v.Time().Format(time.RFC3339Nano)
	} else {
		s = v.String()
	}
	return bounded(s, maxValue)
}

// bounded cuts s to at most max bytes on a character boundary, marking the cut.
func bounded(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const mark = "…"
	cut := max - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

// priority maps a slog level onto syslog's: below Info is debug, below Warn
// info, below Error warning, from Error on err.
func priority(l slog.Level) journal.Priority {
	switch {
	case l < slog.LevelInfo:
		return journal.PriDebug
	case l < slog.LevelWarn:
		return journal.PriInfo
	case l < slog.LevelError:
		return journal.PriWarning
	default:
		return journal.PriErr
	}
}

// field is one attribute as a journal field, named but not yet made unique.
type field struct{ name, value string }

// appendFields flattens a, under the groups in prefix (each ending in '_'),
// into fields; groups nest into the name, an empty group adds nothing, and
// an attribute with neither key nor value is left out, as slog's handlers do.
func appendFields(fs []field, prefix string, a slog.Attr) []field {
	a.Value = a.Value.Resolve()
	if a.Value.Kind() == slog.KindGroup {
		if a.Key != "" {
			prefix += a.Key + "_"
		}
		for _, g := range a.Value.Group() {
			fs = appendFields(fs, prefix, g)
		}
		return fs
	}
	if a.Equal(slog.Attr{}) {
		return fs
	}
	return append(fs, field{fieldName(prefix + a.Key), valueText(a.Value)})
}
