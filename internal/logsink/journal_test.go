package logsink

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// failsafe bounds waits that only a bug makes long.
const failsafe = 20 * time.Second

// TestJournal runs the journal's side in a private /run (see inPrivateRun):
// datagrams of the native protocol read off a socket of the test's own at
// the journal's path, and a real systemd-journald read back with journalctl.
func TestJournal(t *testing.T) {
	if !inPrivateRun(t) {
		return
	}
	t.Run("Fields", testJournalFields)
	t.Run("Fallback", testJournalFallback)
	t.Run("NeverBlocks", testJournalNeverBlocks)
	t.Run("Choice", testJournalChoice)
	t.Run("Journald", testRealJournald)
}

// testJournalFields: each record arrives as one datagram with MESSAGE,
// PRIORITY, SYSLOG_IDENTIFIER and a field per attribute, once each.
func testJournalFields(t *testing.T) {
	privateJournalDir(t)
	sock := listenJournal(t)
	stderr := newLines()
	h, where, closeLog, err := open(Options{Journal: true, Level: slog.LevelDebug}, stderr)
	if err != nil {
		t.Fatal(err)
	}
	if where != "journal" {
		t.Errorf("where = %q, want journal", where)
	}
	log := slog.New(h).With("server", "github")
	log.Info("instance started", "instance", 3, "pid", 1234)
	log.Debug("ping", "instance", 3, "rtt", 1500*time.Microsecond)
	log.Warn("slow", "instance", 3, "stderr", "line 1\nline 2")
	log.Error("exited", "instance", 3, "message", "not the MESSAGE")
	closeLog()

	common := map[string]string{"SYSLOG_IDENTIFIER": "mcpsandbox", "SERVER": "github", "INSTANCE": "3"}
	for _, want := range []map[string]string{
		{"MESSAGE": "instance started", "PRIORITY": "6", "PID": "1234"},
		{"MESSAGE": "ping", "PRIORITY": "7", "RTT": "1.5ms"},
		{"MESSAGE": "slow", "PRIORITY": "4", "STDERR": "line 1\nline 2"},
		{"MESSAGE": "exited", "PRIORITY": "3", "MCPSANDBOX_MESSAGE": "not the MESSAGE"},
	} {
		got := readEntry(t, sock)
		for k, v := range common {
			want[k] = v
		}
		for k, v := range want {
			if vs := got[k]; len(vs) != 1 || vs[0] != v {
				t.Errorf("%s: %s = %q, want %q once", want["MESSAGE"], k, vs, v)
			}
		}
		for k := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("%s: unexpected field %s=%q", want["MESSAGE"], k, got[k])
			}
		}
	}
	if s := stderr.String(); s != "" {
		t.Errorf("stderr: %s", s)
	}
}

// testJournalFallback: with journald gone (its socket left unbound, then
// removed) records go to stderr as text, with one line saying why; once a
// journal listens again they go to it.
func testJournalFallback(t *testing.T) {
	privateJournalDir(t)
	sock := listenJournal(t)
	stderr := newLines()
	h, _, closeLog, err := open(Options{Journal: true}, stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer closeLog()
	log := slog.New(h).With("server", "github")

	log.Info("one")
	if m := readEntry(t, sock)["MESSAGE"]; !slices.Equal(m, []string{"one"}) {
		t.Fatalf("MESSAGE = %q, want one", m)
	}
	sock.Close() // the file stays: as when journald dies
	log.Info("two", "instance", 1)
	if l := stderr.waitFor(t, "msg=two"); !strings.Contains(l, "level=INFO msg=two server=github instance=1") {
		t.Errorf("the refused record on stderr: %q", l)
	}
	os.Remove(journalSocket)
	log.Info("three")
	stderr.waitFor(t, "msg=three")
	notes := func() int { return strings.Count(stderr.String(), "the journal refused a record") }
	if notes() != 1 || !strings.Contains(stderr.String(), "connection refused") {
		t.Errorf("stderr says why %d times, want once, naming the refusal:\n%s", notes(), stderr.String())
	}

	sock = listenJournal(t)
	log.Info("four")
	if m := readEntry(t, sock)["MESSAGE"]; !slices.Equal(m, []string{"four"}) {
		t.Fatalf("after the journal came back: MESSAGE = %q, want four", m)
	}
	sock.Close()
	log.Info("five")
	stderr.waitFor(t, "msg=five")
	if notes() != 2 {
		t.Errorf("a second run of refusals is told %d times in all, want twice:\n%s", notes(), stderr.String())
	}
}

// testJournalNeverBlocks: a journal that reads nothing fills its socket;
// logging goes on (the records that find no room go to stderr) and every
// record ends up in one place or the other, once.
func testJournalNeverBlocks(t *testing.T) {
	privateJournalDir(t)
	sock := listenJournal(t)
	stderr := newLines()
	h, _, closeLog, err := open(Options{Journal: true}, stderr)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(h)
	const n = 4 * queueLen
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			log.Info("record", "seq", i)
		}
	}()
	select {
	case <-done:
	case <-time.After(failsafe):
		t.Fatal("logging blocked on a journal that reads nothing")
	}

	seen := make([]int, n)
	count := func(where string, s string) {
		i, err := strconv.Atoi(s)
		if err != nil || i < 0 || i >= n {
			t.Fatalf("%s: record seq %q", where, s)
		}
		seen[i]++
	}
	for _, l := range stderr.all() {
		if m := regexp.MustCompile(`msg=record seq=(\d+)`).FindStringSubmatch(l); m != nil {
			count("stderr", m[1])
		}
	}
	spilled := slices.Index(seen, 1) >= 0

	const end = "end of test"
	type result struct {
		seqs []string
		err  error
	}
	read := make(chan result)
	go func() {
		var r result
		buf := make([]byte, 256<<10)
		for {
			var e map[string][]string
			if e, r.err = readEntryErr(sock, buf); r.err != nil || slices.Equal(e["MESSAGE"], []string{end}) {
				read <- r
				return
			}
			r.seqs = append(r.seqs, e["SEQ"]...)
		}
	}()
	closeLog() // sends what is queued, as the journal reads
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: journalSocket, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("MESSAGE=" + end + "\n"))
	c.Close()
	r := <-read
	if r.err != nil {
		t.Fatal(r.err)
	}
	for _, s := range r.seqs {
		count("journal", s)
	}
	inJournal := len(r.seqs)

	for i, k := range seen {
		if k != 1 {
			t.Errorf("record %d arrived %d times, want once", i, k)
		}
	}
	if !spilled || inJournal < queueLen {
		t.Errorf("%d records: %d reached the journal; want the queue's %d at least and the rest on stderr", n, inJournal, queueLen)
	}
	// Each run of overflows is explained once; a new run needs a record
	// to have left the full queue since the last one.
	if k := strings.Count(stderr.String(), "the journal is not keeping up"); k < 1 || k > inJournal-queueLen+1 {
		t.Errorf("stderr says the journal is not keeping up %d times, want once per run of overflows (1 to %d)", k, inJournal-queueLen+1)
	}
	t.Logf("%d records to a journal reading nothing: %d queued or in its socket, %d on stderr", n, inJournal, n-inJournal)
}

// testJournalChoice: Journal insists on a journal; Auto takes it only when
// stderr is the journal's stream and its socket answers.
func testJournalChoice(t *testing.T) {
	privateJournalDir(t)
	file := filepath.Join(t.TempDir(), "daemon.log")
	if _, _, _, err := open(Options{Journal: true}, newLines()); err == nil || !strings.Contains(err.Error(), journalSocket) {
		t.Errorf("Journal with no journal: %v, want an error naming %s", err, journalSocket)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(2, &st); err != nil {
		t.Fatal(err)
	}
	stream := fmt.Sprintf("%d:%d", st.Dev, st.Ino) // as systemd sets it
	for _, c := range []struct {
		stream string
		socket bool
		want   string
	}{
		{stream, false, file},
		{"", true, file},
		{"1:1", true, file}, // inherited from a service, stderr elsewhere
		{stream, true, "journal"},
	} {
		t.Setenv("JOURNAL_STREAM", c.stream)
		var sock *net.UnixConn
		if c.socket {
			sock = listenJournal(t)
		}
		_, where, closeLog, err := open(Options{Auto: true, File: file}, newLines())
		if err != nil {
			t.Fatal(err)
		}
		closeLog()
		if where != c.want {
			t.Errorf("Auto with JOURNAL_STREAM=%q (stderr %s) and a socket %v: %q, want %q", c.stream, stream, c.socket, where, c.want)
		}
		if sock != nil {
			sock.Close()
			os.Remove(journalSocket)
		}
	}
}

// listenJournal binds the journal's socket, as journald does.
func listenJournal(t *testing.T) *net.UnixConn {
	t.Helper()
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: journalSocket, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readEntry reads one datagram of the journal's native protocol: fields
// as NAME=value lines, or NAME, a 64-bit little-endian length, the bytes
// and a newline for a value holding a newline.
func readEntry(t *testing.T, c *net.UnixConn) map[string][]string {
	t.Helper()
	e, err := readEntryErr(c, make([]byte, 256<<10))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func readEntryErr(c *net.UnixConn, buf []byte) (map[string][]string, error) {
	c.SetReadDeadline(time.Now().Add(failsafe))
	n, err := c.Read(buf)
	if err != nil {
		return nil, fmt.Errorf("reading the journal socket: %w", err)
	}
	e, err := parseNative(buf[:n])
	if err != nil {
		return nil, fmt.Errorf("%w in %q", err, buf[:n])
	}
	return e, nil
}

func parseNative(b []byte) (map[string][]string, error) {
	e := map[string][]string{}
	for len(b) > 0 {
		line, rest, ok := bytes.Cut(b, []byte("\n"))
		if !ok {
			return nil, fmt.Errorf("a field without its newline")
		}
		if name, value, ok := bytes.Cut(line, []byte("=")); ok {
			e[string(name)] = append(e[string(name)], string(value))
			b = rest
			continue
		}
		if len(rest) < 8 {
			return nil, fmt.Errorf("field %s without its length", line)
		}
		size := binary.LittleEndian.Uint64(rest)
		rest = rest[8:]
		if uint64(len(rest)) < size+1 || rest[size] != '\n' {
			return nil, fmt.Errorf("field %s: %d bytes and a newline do not follow", line, size)
		}
		e[string(line)] = append(e[string(line)], string(rest[:size]))
		b = rest[size+1:]
	}
	return e, nil
}

// lines is a stderr that tests can wait on: the text handler writes one
// record a Write.
type lines struct {
	mu   sync.Mutex
	buf  []string
	next chan string
}

func newLines() *lines { return &lines{next: make(chan string, 64<<10)} }

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, string(p))
	select {
	case l.next <- string(p):
	default:
	}
	return len(p), nil
}

func (l *lines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.buf)
}

func (l *lines) String() string { return strings.Join(l.all(), "") }

// waitFor returns the next line holding s.
func (l *lines) waitFor(t *testing.T, s string) string {
	t.Helper()
	deadline := time.After(failsafe)
	for {
		select {
		case line := <-l.next:
			if strings.Contains(line, s) {
				return line
			}
		case <-deadline:
			t.Fatalf("no line with %q on stderr; it holds:\n%s", s, l.String())
		}
	}
}
