package diagnose

import (
	"regexp"
	"strings"
	"sync"
)

var errorWords = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)error|fatal|exception|cannot|can't|failed|denied|not found|no such`)
})

// ErrorLine picks the stderr line that says what went wrong: the last one
// naming an error (node ends its report with its version), else the last
// line.
func ErrorLine(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if errorWords().MatchString(lines[i]) {
			return strings.TrimSpace(lines[i])
		}
	}
	if len(lines) > 0 {
		return strings.TrimSpace(lines[len(lines)-1])
	}
	return ""
}
