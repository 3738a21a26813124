package diagnose

import (
	"regexp"
	"strings"
	"sync"
)

// A server that cannot start because of its confinement says so on stderr
// in its runtime's words: a file that is not there (not granted), a
// read-only grant, no network. These patterns read those words; the
// diagnosis (cause.go) then checks the host to tell confinement from a real
// missing file. Each sample is a line the runtime printed confined here.

// causeKind is what a stderr line says went wrong.
type causeKind uint8

const (
	causeMissing  causeKind = iota + 1 // no such file (ENOENT)
	causeDenied                        // permission denied (EACCES)
	causeReadOnly                      // read-only file system (EROFS)
	causeOffline                       // a package download failed (no network)
	causeEnv                           // a variable the server needs is not in its environment
)

// stderrPattern recognises one runtime's message; the first submatch is
// the path (or, for causeOffline, the URL; for causeEnv, the variable).
type stderrPattern struct {
	name   string
	kind   causeKind
	entry  bool // the path is the program the runtime was asked to run
	node   bool // node resolves the path's package upward
	expr   string
	sample string
}

// stderrRegexps are the patterns' expressions compiled, on the first
// failed start: most runs never read a start failure, and compiling them
// at init would cost every start.
var stderrRegexps = sync.OnceValue(func() []*regexp.Regexp {
	res := make([]*regexp.Regexp, len(stderrPatterns))
	for i, p := range stderrPatterns {
		res[i] = regexp.MustCompile(p.expr)
	}
	return res
})

var stderrPatterns = []stderrPattern{
	{name: "python: script", kind: causeMissing, entry: true,
		expr:   `can't open file '(/[^']+)': \[Errno 2\]`,
		sample: `/usr/bin/python3: can't open file '/tmp/frx/py/server.py': [Errno 2] No such file or directory`},
	{name: "python: ENOENT", kind: causeMissing,
		expr:   `\[Errno 2\] No such file or directory: '(/[^']+)'`,
		sample: `FileNotFoundError: [Errno 2] No such file or directory: '/tmp/frx/py/server.py'`},
	{name: "python: EACCES", kind: causeDenied,
		expr:   `\[Errno 13\] Permission denied: '(/[^']+)'`,
		sample: `PermissionError: [Errno 13] Permission denied: '/tmp/frx/secret/f'`},
	{name: "python: EROFS", kind: causeReadOnly,
		expr:   `\[Errno 30\] Read-only file system: '(/[^']+)'`,
		sample: `OSError: [Errno 30] Read-only file system: '/tmp/frx/w/out.txt'`},
	{name: "node: module", kind: causeMissing, node: true,
		expr:   `Error(?: \[ERR_MODULE_NOT_FOUND\])?: Cannot find module '(/[^']+)'`,
		sample: `Error: Cannot find module '/tmp/frx/nodepkg/dist/index.js'`},
	{name: "node: ENOENT", kind: causeMissing,
		expr:   `ENOENT: no such file or directory, \w+ '(/[^']+)'`,
		sample: `Error: ENOENT: no such file or directory, open '/tmp/frx/py/server.py'`},
	{name: "node: EACCES", kind: causeDenied,
		expr:   `EACCES: permission denied, \w+ '(/[^']+)'`,
		sample: `Error: EACCES: permission denied, open '/tmp/frx/secret/f'`},
	{name: "node: EROFS", kind: causeReadOnly,
		expr:   `EROFS: read-only file system, \w+ '(/[^']+)'`,
		sample: `Error: EROFS: read-only file system, open '/tmp/frx/w/out.txt'`},
	{name: "npm: offline", kind: causeOffline,
		expr:   `npm (?:error|ERR!) request to (https?://\S+) failed`,
		sample: `npm error request to https://registry.npmjs.org/cowsay failed: cache mode is 'only-if-cached' but no cached response is available.`},
	{name: "env: required", kind: causeEnv,
		expr:   `\b([A-Z][A-Z0-9_]{2,}) (?:environment variable )?is (?:required|not set|missing)\b`,
		sample: `Error: GITLAB_PERSONAL_ACCESS_TOKEN environment variable is not set`},
	{name: "shell: ENOENT", kind: causeMissing,
		expr:   `: (/[^:]+): No such file or directory$`,
		sample: `/root/.pyenv/shims/python3: line 12: /root/.pyenv/libexec/pyenv: No such file or directory`},
	{name: "dash: script", kind: causeMissing, entry: true,
		expr:   `^sh: \d+: cannot open (/\S+): No such file$`,
		sample: `sh: 0: cannot open /tmp/frx/py/run.sh: No such file`},
	{name: "dash: command", kind: causeMissing,
		expr:   `^\S+: \d+: (?:exec: )?(/\S+): not found$`,
		sample: `sh: 1: exec: /tmp/frx/py/nothere: not found`},
}

// stderrFinding is one recognised line.
type stderrFinding struct {
	pattern *stderrPattern
	path    string // or URL
	line    string
}

// findCauses lists what the lines say went wrong, the last line first: the
// last error a server printed is the one that ended it.
func findCauses(lines []string) []stderrFinding {
	var found []stderrFinding
	for i := len(lines) - 1; i >= 0; i-- {
		line := strings.TrimSpace(lines[i])
		for j := range stderrPatterns {
			p := &stderrPatterns[j]
			if m := stderrRegexps()[j].FindStringSubmatch(line); m != nil {
				found = append(found, stderrFinding{pattern: p, path: m[1], line: line})
				break
			}
		}
	}
	return found
}
