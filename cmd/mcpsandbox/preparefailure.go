package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// A failed prepare is summed up in one line a user reads: what failed
// (npm names nothing when an install script fails: it prints neither the
// package nor the script's output, and keeps both in its debug log in the
// cache), the hosts the install tried and was kept from, and the exact
// command that prepares it.

const (
	tailBytes   = 4 << 10 // the end of the tool's output kept for the summary
	quotedBytes = 200     // the most of its last line the summary quotes
	npmLogBytes = 1 << 20 // the end of npm's debug log read
)

// outputTail copies the tool's output on and keeps its end. The log
// shares the writer (log), under the same lock: wrap's prepare writes both
// into one buffer.
type outputTail struct {
	w    io.Writer
	mu   sync.Mutex
	tail []byte
}

func (t *outputTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tail = append(t.tail, p...)
	if len(t.tail) > tailBytes {
		t.tail = slices.Clone(t.tail[len(t.tail)-tailBytes:])
	}
	return t.w.Write(p)
}

// log is the writer for prepare's own log lines, which are not the tool's.
func (t *outputTail) log() io.Writer { return logBeside{t} }

type logBeside struct{ t *outputTail }

func (l logBeside) Write(p []byte) (int, error) {
	l.t.mu.Lock()
	defer l.t.mu.Unlock()
	return l.t.w.Write(p)
}

// lastLine is the last line of output that says something (npm's
// pointer to its log says nothing of what failed).
func (t *outputTail) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.tail)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l != "" && !strings.HasPrefix(l, "npm notice") && !strings.HasPrefix(l, "npm error A complete log of this run") {
			return l
		}
	}
	return ""
}

// prepareFailure is what is known of a failed prepare.
type prepareFailure struct {
	once   supervisor.Once
	script npmScript // from npm's log
	last   string    // the tool's last line of output
	args   []string  // prepare's own arguments, for the command that prepares it
}

// npmScript is a package's script that failed, as npm's log tells it.
type npmScript struct {
	Package string // NAME@VERSION
	Text    string // "the install script of PKG@VER (CMD) exited with status N"
}

// skipDownloadVars are the variables with which packages whose install
// downloads a program skip that download.
var skipDownloadVars = map[string]string{
	"puppeteer": "PUPPETEER_SKIP_DOWNLOAD=true",
	"electron":  "ELECTRON_SKIP_BINARY_DOWNLOAD=1",
	"cypress":   "CYPRESS_INSTALL_BINARY=0",
}

// skipVar is the variable that skips the failed script's download, if
// its package has one.
func (f prepareFailure) skipVar() string {
	name := f.script.Package
	if i := strings.LastIndex(name, "@"); i > 0 {
		name = name[:i]
	}
	return skipDownloadVars[name]
}

// String is the summary, after "mcpsandbox prepare: ".
func (f prepareFailure) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "fetching the packages failed (%s)", f.once.Exit)
	if f.script.Text != "" {
		fmt.Fprintf(&b, ": %s", f.script.Text)
	}
	if len(f.once.Refused) > 0 {
		if f.script.Text == "" {
			b.WriteString(": the install")
		} else {
			b.WriteString(" and")
		}
		hosts := strings.Join(f.once.Refused, ", ")
		if f.once.RefusedMore {
			hosts += " and more"
		}
		fmt.Fprintf(&b, " tried to reach %s (not allowed); prepare with: %s", hosts, cmdline.ShellJoin(f.fix()))
		if v := f.skipVar(); v != "" {
			fmt.Fprintf(&b, ", or skip the download: %s", cmdline.ShellJoin(append([]string{"mcpsandbox", "prepare", "--env", v}, f.args...)))
		}
		return b.String()
	}
	switch {
	case f.last != "":
		if len(f.last) > quotedBytes {
			f.last = f.last[:quotedBytes] + "..."
		}
		fmt.Fprintf(&b, "; its last line: %q", f.last)
	case f.script.Text == "":
		b.WriteString("; it printed nothing")
	}
	return b.String()
}

// fix is the prepare command line that lets the install reach the hosts
// it was kept from.
func (f prepareFailure) fix() []string {
	cmd := []string{"mcpsandbox", "prepare"}
	for _, h := range f.once.Refused {
		cmd = append(cmd, "--allow-host", h)
	}
	return append(cmd, f.args...)
}

// npmRunLine is npm's debug log line of a script it ran ("info run PKG@VER
// SCRIPT PATH CMD"), then of how it ended ("info run PKG@VER SCRIPT {
// code: N, signal: S }").
var npmRunLine = regexp.MustCompile(`^\d+ info run (\S+) (\S+) (.*)$`)
var npmRunEnd = regexp.MustCompile(`^\{ code: (\w+), signal: (\S+) \}$`)

// failedScript reads npm's newest debug log in its cache (npm_config_cache,
// inside the state directory) for the last script that failed, if npm
// wrote it since. The cache is the sandboxed npm's to write, so nothing in
// it is followed out of it, and only a regular file is read.
func failedScript(stateDir, cache string, since time.Time) npmScript {
	rel, err := filepath.Rel(stateDir, filepath.Join(cache, "_logs"))
	if err != nil || stateDir == "" || cache == "" || rel == ".." || strings.HasPrefix(rel, "../") {
		return npmScript{}
	}
	state, err := os.Open(stateDir)
	if err != nil {
		return npmScript{}
	}
	defer state.Close()
	beneath := func(path string, flags int) (*os.File, error) {
		fd, err := unix.Openat2(int(state.Fd()), path, &unix.OpenHow{
			Flags:   uint64(flags | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK),
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		if err != nil {
			return nil, err
		}
		return os.NewFile(uintptr(fd), path), nil
	}
	dir, err := beneath(rel, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return npmScript{}
	}
	names, _ := dir.Readdirnames(-1)
	dir.Close()
	names = slices.DeleteFunc(names, func(n string) bool { return !strings.HasSuffix(n, ".log") })
	if len(names) == 0 {
		return npmScript{}
	}
	f, err := beneath(filepath.Join(rel, slices.Max(names)), unix.O_RDONLY) // npm names them by the time they began
	if err != nil {
		return npmScript{}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.ModTime().Before(since) {
		return npmScript{}
	}
	data, _ := io.ReadAll(io.NewSectionReader(f, max(0, st.Size()-npmLogBytes), npmLogBytes))
	return scriptOf(data)
}

// scriptOf is the last failed script npm's debug log records.
func scriptOf(log []byte) npmScript {
	commands := map[string]string{} // "PKG SCRIPT" → its command
	var failed npmScript
	for _, line := range bytes.Split(log, []byte("\n")) {
		m := npmRunLine.FindSubmatch(line)
		if m == nil {
			continue
		}
		pkg, script, rest := string(m[1]), string(m[2]), string(m[3])
		end := npmRunEnd.FindStringSubmatch(rest)
		if end == nil {
			if _, cmd, ok := strings.Cut(rest, " "); ok {
				commands[pkg+" "+script] = cmd
			}
			continue
		}
		if end[1] == "0" && end[2] == "null" {
			continue
		}
		how := "exited with status " + end[1]
		if end[2] != "null" {
			how = "was killed by " + strings.Trim(end[2], "'")
		}
		failed = npmScript{Package: pkg, Text: fmt.Sprintf("the %s script of %s", script, pkg)}
		if cmd := commands[pkg+" "+script]; cmd != "" {
			failed.Text += fmt.Sprintf(" (%s)", cmd)
		}
		failed.Text += " " + how
	}
	printable := utf8.ValidString(failed.Text) && !strings.ContainsFunc(failed.Text, func(r rune) bool { return !unicode.IsPrint(r) })
	if len(failed.Text) > 2*quotedBytes || !printable {
		return npmScript{} // not a line npm wrote: the cache is the server's
	}
	return failed
}
