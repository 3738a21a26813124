package logsink

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	journald   = "/lib/systemd/systemd-journald"
	runtimeDir = "/run/log/journal" // where journald keeps a volatile journal
)

// testRealJournald: a real systemd-journald in the private /run stores the
// records with their fields, `journalctl SERVER=github` finds that server's
// and no other's, and once journald is killed records go to stderr.
func testRealJournald(t *testing.T) {
	if os.Getenv(realRootEnv) == "" {
		t.Skip("a real journald needs root (here only a user namespace's)")
	}
	journalctl, err := exec.LookPath("journalctl")
	if _, statErr := os.Stat(journald); statErr != nil || err != nil {
		t.Skipf("no systemd-journald and journalctl here (%v, %v): apt-get install systemd", statErr, err)
	}
	privateJournalDir(t)
	stop := startJournald(t)

	var st syscall.Stat_t
	if err := syscall.Fstat(2, &st); err != nil {
		t.Fatal(err)
	}
	t.Setenv("JOURNAL_STREAM", fmt.Sprintf("%d:%d", st.Dev, st.Ino))
	stderr := newLines()
	h, where, closeLog, err := open(Options{Auto: true, File: t.TempDir() + "/not-used.log"}, stderr)
	if err != nil {
		t.Fatal(err)
	}
	if where != "journal" {
		t.Fatalf("Auto under a journal: where = %q, want journal", where)
	}
	log := slog.New(h)
	log.With("server", "github").Info("instance started", "instance", 1)
	log.With("server", "filesystem").Error("instance exited", "instance", 2, "exit_code", 1)
	log.With("server", "github").Warn("slow answer", "instance", 1, "method", "tools/call")
	closeLog()

	// Follow the journal until the last record is stored.
	follow := exec.Command(journalctl, "-D", runtimeDir, "-o", "json", "--no-pager", "--follow", "--no-tail", "SYSLOG_IDENTIFIER=mcpsandbox")
	out, err := follow.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	stored := make(chan int)
	go func() {
		n := 0
		for sc := bufio.NewScanner(out); sc.Scan(); {
			n++
			if strings.Contains(sc.Text(), `"MESSAGE":"slow answer"`) {
				break
			}
		}
		stored <- n
	}()
	select {
	case n := <-stored:
		if n != 3 {
			t.Errorf("journalctl --follow showed %d records up to the last, want 3", n)
		}
	case <-time.After(failsafe):
		t.Fatal("the records never showed in the journal")
	}
	follow.Process.Kill()
	follow.Wait()

	got := journalEntries(t, journalctl, "SERVER=github")
	if len(got) != 2 {
		t.Fatalf("journalctl SERVER=github found %d records, want github's 2: %v", len(got), got)
	}
	for i, want := range []map[string]string{
		{"MESSAGE": "instance started", "PRIORITY": "6", "INSTANCE": "1"},
		{"MESSAGE": "slow answer", "PRIORITY": "4", "INSTANCE": "1", "METHOD": "tools/call"},
	} {
		want["SERVER"] = "github"
		want["SYSLOG_IDENTIFIER"] = "mcpsandbox"
		want["_TRANSPORT"] = "journal"
		want["_PID"] = strconv.Itoa(os.Getpid())
		for k, v := range want {
			if got[i][k] != v {
				t.Errorf("record %d: %s = %q, want %q", i, k, got[i][k], v)
			}
		}
	}
	if other := journalEntries(t, journalctl, "SERVER=filesystem", "INSTANCE=2"); len(other) != 1 ||
		other[0]["PRIORITY"] != "3" || other[0]["EXIT_CODE"] != "1" {
		t.Errorf("journalctl SERVER=filesystem INSTANCE=2: %v, want the one error record with EXIT_CODE=1", other)
	}

	// journald dies: its socket stays, bound by no one.
	h, _, closeLog, err = open(Options{Journal: true}, stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer closeLog()
	stop()
	slog.New(h).Info("after journald", "server", "github")
	if l := stderr.waitFor(t, "after journald"); !strings.Contains(l, "server=github") {
		t.Errorf("the record journald could not take, on stderr: %q", l)
	}
}

// startJournald runs systemd-journald on a volatile journal in the private
// /run and waits for its READY=1; stop kills it and waits for it to go.
func startJournald(t *testing.T) (stop func()) {
	t.Helper()
	conf := "/run/systemd/journald.conf.d"
	if err := os.MkdirAll(conf, 0o755); err != nil {
		t.Fatal(err)
	}
	// Volatile, so nothing is written to the host's /var/log/journal; no
	// kernel log, no forwarding, no rate limit.
	settings := "[Journal]\nStorage=volatile\nReadKMsg=no\nForwardToSyslog=no\nForwardToWall=no\nForwardToConsole=no\nRateLimitBurst=0\n"
	if err := os.WriteFile(conf+"/logsink-test.conf", []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	notify, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: "/run/logsink-notify", Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer notify.Close()
	var output bytes.Buffer
	cmd := exec.Command(journald)
	cmd.Env = []string{"NOTIFY_SOCKET=/run/logsink-notify"}
	cmd.Stdout, cmd.Stderr = &output, &output
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop = func() {
		cmd.Process.Kill()
		<-exited
	}
	t.Cleanup(stop)

	notify.SetReadDeadline(time.Now().Add(failsafe))
	buf := make([]byte, 4096)
	for {
		n, err := notify.Read(buf)
		if err != nil {
			stop()
			t.Fatalf("systemd-journald never said READY=1 (%v); its output:\n%s", err, output.String())
		}
		if bytes.Contains(buf[:n], []byte("READY=1")) {
			return stop
		}
	}
}

// journalEntries is what journalctl finds in the test's journal for matches,
// each field as text.
func journalEntries(t *testing.T, journalctl string, matches ...string) []map[string]string {
	t.Helper()
	args := append([]string{"-D", runtimeDir, "-o", "json", "--no-pager"}, matches...)
	out, err := exec.Command(journalctl, args...).Output()
	if err != nil {
		t.Fatalf("journalctl %s: %v", strings.Join(args, " "), err)
	}
	var entries []map[string]string
	for line := range strings.Lines(string(out)) {
		var raw map[string]any
		if err := json.Unmarshal([]byte(line), &raw); err != nil {
			t.Fatalf("journalctl output %q: %v", line, err)
		}
		e := map[string]string{}
		for k, v := range raw {
			e[k] = fmt.Sprint(v)
		}
		entries = append(entries, e)
	}
	return entries
}
