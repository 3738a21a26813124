package supervisor

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Values that come from the server (ids, lines, heads of messages) are
// logged bounded: a 15 MiB id once made a 15.7 MB log line, and slog's
// escaping of invalid UTF-8 (\xff, four bytes each) quadrupled that.

const (
	// logValueMax bounds one value in a log record: enough to recognise
	// an id or the start of a stray line.
	logValueMax = 256
	// stderrLogMax bounds one line of the server's stderr in the log and in
	// the crash report: it is the server's own log, meant to be read, so
	// it gets more room than a value, still bounded.
	stderrLogMax = 512
)

// logValue renders untrusted bytes for the log: the trailing newline
// dropped, at most logValueMax bytes, valid UTF-8 (invalid bytes become
// U+FFFD), and the original length when cut.
func logValue(b []byte) string { return logValueN(b, logValueMax) }

func logValueN(b []byte, n int) string {
	b = bytes.TrimRight(b, "\r\n")
	if len(b) <= n {
		if utf8.Valid(b) {
			return string(b)
		}
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	return strings.ToValidUTF8(string(b[:n]), "\uFFFD") + "… (" + strconv.Itoa(len(b)) + " bytes)"
}
