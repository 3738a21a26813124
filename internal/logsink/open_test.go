package logsink

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDefaultFile(t *testing.T) {
	for _, c := range []struct {
		root bool
		env  map[string]string
		want string
	}{
		{true, map[string]string{"HOME": "/root", "XDG_STATE_HOME": "/root/st"}, "/var/log/mcpsandbox/daemon.log"},
		{false, map[string]string{"HOME": "/home/alice"}, "/home/alice/.local/state/mcpsandbox/daemon.log"},
		{false, map[string]string{"HOME": "/home/alice", "XDG_STATE_HOME": "/srv/state"}, "/srv/state/mcpsandbox/daemon.log"},
		// A relative XDG_STATE_HOME is invalid by the XDG spec: ignored.
		{false, map[string]string{"HOME": "/home/alice", "XDG_STATE_HOME": "state"}, "/home/alice/.local/state/mcpsandbox/daemon.log"},
		{false, map[string]string{}, ""},
	} {
		if got := DefaultFile(c.root, func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("DefaultFile(%v, %v) = %q, want %q", c.root, c.env, got, c.want)
		}
	}
}

// TestAlsoGetsEveryRecord: the daemon's ring sees each record with its
// attributes and groups, including those below the sink's level.
func TestAlsoGetsEveryRecord(t *testing.T) {
	var ring bytes.Buffer
	also := slog.NewTextHandler(&ring, &slog.HandlerOptions{Level: slog.LevelDebug})
	file := filepath.Join(t.TempDir(), "daemon.log")
	log, _, closeLog := openFile(t, Options{File: file, Level: slog.LevelInfo, Also: also}, new(bytes.Buffer))
	log = log.With("server", "github").WithGroup("req")
	log.Debug("detail", "id", 1)
	log.Info("answered", "id", 2)
	closeLog()

	data, _ := os.ReadFile(file)
	for _, want := range []string{"msg=detail server=github req.id=1", "msg=answered server=github req.id=2"} {
		if !strings.Contains(ring.String(), want) {
			t.Errorf("Also got\n%s\nwant a record with %q", ring.String(), want)
		}
	}
	if strings.Contains(string(data), "detail") || !strings.Contains(string(data), "msg=answered server=github req.id=2") {
		t.Errorf("the file at level Info holds\n%s\nwant the Info record only", data)
	}
}

// TestAutoWithoutJournalWritesTheFile: a process whose stderr is not the
// journal's stream logs to the file even where a journal runs.
func TestAutoWithoutJournalWritesTheFile(t *testing.T) {
	t.Setenv("JOURNAL_STREAM", "")
	file := filepath.Join(t.TempDir(), "daemon.log")
	log, where, closeLog := openFile(t, Options{Auto: true, File: file}, new(bytes.Buffer))
	log.Info("hello")
	closeLog()
	if data, _ := os.ReadFile(file); where != file || !strings.Contains(string(data), "msg=hello") {
		t.Errorf("Auto outside systemd: where %q, file %q; want %s holding the record", where, data, file)
	}
}

func TestBadOptions(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "plain")
	os.WriteFile(notDir, nil, 0o600)
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{File: filepath.Join(dir, "a.log"), MaxSize: -1}, "must not be negative"},
		{Options{File: filepath.Join(dir, "a.log"), Keep: -1}, "must not be negative"},
		{Options{File: filepath.Join(notDir, "a.log")}, "choose a log file"},
		{Options{File: dir}, "choose a log file"},
		{Options{File: "/dev/null"}, "not a regular file"},
	} {
		_, _, _, err := open(c.o, new(bytes.Buffer))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("open(%+v) = %v, want an error saying %q", c.o, err, c.want)
		}
	}
}

func TestCloseTwiceAndLogAfterClose(t *testing.T) {
	file := filepath.Join(t.TempDir(), "daemon.log")
	log, _, closeLog := openFile(t, Options{File: file}, new(bytes.Buffer))
	log.Info("before")
	if err := closeLog(); err != nil {
		t.Fatal(err)
	}
	if err := closeLog(); err != nil {
		t.Errorf("a second close: %v", err)
	}
	log.Info("after") // must not panic
}
