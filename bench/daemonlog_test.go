package bench

import (
	"bufio"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// daemonLog follows a daemon's log file as it grows (inotify wakes it), so
// the daemon benchmarks wait for the records that say an instance is warm
// or has ended instead of sleeping.
type daemonLog struct {
	mu      sync.Mutex
	lines   []string
	changed chan struct{} // closed and replaced when lines grow
	done    bool          // the follower stopped (the file or the watch failed)
	stop    func()
}

// followLog follows the file at path, which exists, from its start.
func followLog(b testing.TB, path string) *daemonLog {
	b.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		b.Fatal(err)
	}
	// Watched before the first read, so no write after it goes unnoticed.
	if _, err := unix.InotifyAddWatch(fd, path, unix.IN_MODIFY); err != nil {
		unix.Close(fd)
		b.Fatalf("watching %s: %v", path, err)
	}
	events := os.NewFile(uintptr(fd), "inotify") // a non-blocking fd: Close ends a Read
	f, err := os.Open(path)
	if err != nil {
		events.Close()
		b.Fatal(err)
	}
	l := &daemonLog{changed: make(chan struct{})}
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		l.follow(f, events)
	}()
	l.stop = func() {
		events.Close()
		<-finished
		f.Close()
	}
	return l
}

func (l *daemonLog) follow(f *os.File, events *os.File) {
	defer func() {
		l.mu.Lock()
		l.done = true
		close(l.changed)
		l.mu.Unlock()
	}()
	r := bufio.NewReader(f)
	var partial string
	buf := make([]byte, 64<<10)
	for {
		line, err := r.ReadString('\n')
		if err == nil {
			l.add(partial + strings.TrimSuffix(line, "\n"))
			partial = ""
			continue
		}
		if !errors.Is(err, io.EOF) {
			return
		}
		partial += line
		if _, err := events.Read(buf); err != nil { // wait for the next write
			return
		}
	}
}

func (l *daemonLog) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
	close(l.changed)
	l.changed = make(chan struct{})
}

// countLocked is how many records so far have the message msg and, when
// server is not "", are about that server.
func (l *daemonLog) countLocked(msg, server string) int {
	n := 0
	for _, line := range l.lines {
		if isRecord(line, msg, server) {
			n++
		}
	}
	return n
}

// has tells whether a record with message msg has the attribute attr
// (KEY=VALUE, as the text handler writes it).
func (l *daemonLog) has(msg, attr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if isRecord(line, msg, "") && hasAttr(line, attr) {
			return true
		}
	}
	return false
}

// hasAttr tells whether a text-handler line holds attr, whole.
func hasAttr(line, attr string) bool {
	for rest := line; ; {
		i := strings.Index(rest, " "+attr)
		if i < 0 {
			return false
		}
		end := i + 1 + len(attr)
		if end == len(rest) || rest[end] == ' ' {
			return true
		}
		rest = rest[end:]
	}
}

// isRecord tells whether a text-handler line is a record with message msg
// about server ("": any).
func isRecord(line, msg, server string) bool {
	if !strings.Contains(line, ` msg="`+msg+`"`) {
		return false
	}
	if server == "" {
		return true
	}
	return hasAttr(line, "server="+server)
}

// waitCount waits until at least n records have message msg about server,
// failing at once when a record with message failMsg (about any server)
// appears, and after limit.
func (l *daemonLog) waitCount(b testing.TB, msg, server string, n int, failMsg string, limit time.Duration) {
	b.Helper()
	deadline := time.After(limit)
	for {
		l.mu.Lock()
		got := l.countLocked(msg, server)
		var failed string
		if failMsg != "" {
			for _, line := range l.lines {
				if isRecord(line, failMsg, "") {
					failed = line
					break
				}
			}
		}
		changed, done := l.changed, l.done
		l.mu.Unlock()
		switch {
		case failed != "":
			b.Fatalf("waiting for %d records %q of server %q: the daemon logged %s", n, msg, server, failed)
		case got >= n:
			return
		case done:
			b.Fatalf("waiting for %d records %q of server %q (%d so far): the log is no longer followed", n, msg, server, got)
		}
		select {
		case <-changed:
		case <-deadline:
			b.Fatalf("waiting for %d records %q of server %q: %d after %s", n, msg, server, got, limit)
		}
	}
}

// tail is the log's last n lines, for a failure's message.
func (l *daemonLog) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines[max(0, len(l.lines)-n):], "\n")
}
