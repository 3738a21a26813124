package logsink

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/coreos/go-systemd/v22/journal"
)

const (
	defaultMaxSize = 10 << 20
	defaultKeep    = 5
	// Where names the journal this way for the daemon's first line.
	Journal = "journal"
)

// Options say where the log goes.
type Options struct {
	Journal bool   // send to the systemd journal (Auto decides when false and Auto true)
	Auto    bool   // journal when the process runs under systemd with a journal (its stderr is the journal stream, JOURNAL_STREAM, and the journal's socket answers)
	File    string // otherwise: this file, rotated ("": DefaultFile for this user)
	MaxSize int64  // rotate before a record would take the file past this many bytes (default 10 MiB)
	Keep    int    // rotated files kept, FILE.1 the newest (default 5)
	Level   slog.Level
	Also    slog.Handler // every record also goes here (the daemon's per-server ring for `logs`), may be nil
}

// Open returns the handler the daemon logs through, where its records go
// (Journal, or the log file's absolute path) and a close that sends or
// writes what is pending and releases the sink (once; later calls return
// nil). Records the journal refuses (journald gone) or cannot take at once
// go to stderr as text. Journal where no journal answers is an error.
func Open(o Options) (h slog.Handler, where string, close func() error, err error) {
	return open(o, os.Stderr)
}

func open(o Options, stderr io.Writer) (slog.Handler, string, func() error, error) {
	if o.MaxSize < 0 || o.Keep < 0 {
		return nil, "", nil, fmt.Errorf("log rotation: size %d and files kept %d must not be negative (0 means the default, %d bytes and %d files)", o.MaxSize, o.Keep, defaultMaxSize, defaultKeep)
	}
	fallback := slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: o.Level})
	var sink slog.Handler
	var where string
	var closeSink func() error
	if o.Journal || o.Auto && UnderJournal() {
		if !o.Journal || journal.Enabled() {
			j := newJournalHandler(o.Level, fallback)
			sink, where, closeSink = j, Journal, j.out.close
		} else {
			return nil, "", nil, errors.New("the systemd journal does not answer on /run/systemd/journal/socket; log to a file instead")
		}
	} else {
		name := o.File
		if name == "" {
			name = DefaultFile(os.Geteuid() == 0, os.Getenv)
			if name == "" {
				return nil, "", nil, errors.New("no place for the log file: neither XDG_STATE_HOME nor HOME is set; name a log file")
			}
		}
		abs, err := filepath.Abs(name)
		if err != nil {
			return nil, "", nil, fmt.Errorf("log file %s: %w", name, err)
		}
		maxSize, keep := o.MaxSize, o.Keep
		if maxSize == 0 {
			maxSize = defaultMaxSize
		}
		if keep == 0 {
			keep = defaultKeep
		}
		f, err := openRotating(abs, maxSize, keep, stderr)
		if err != nil {
			return nil, "", nil, err
		}
		sink = slog.NewTextHandler(f, &slog.HandlerOptions{Level: o.Level})
		where, closeSink = abs, f.Close
	}
	if o.Also != nil {
		sink = slog.NewMultiHandler(sink, o.Also)
	}
	return sink, where, sync.OnceValue(closeSink), nil
}

// UnderJournal reports whether this process runs as a systemd service whose
// journal it can reach: its stderr is the stream JOURNAL_STREAM names (so
// not a terminal it merely inherited the variable in) and the journal's
// native socket answers.
func UnderJournal() bool {
	stream, _ := journal.StderrIsJournalStream()
	return stream && journal.Enabled()
}

// DefaultFile is where the daemon's log file goes when none is named:
// /var/log/mcpsandbox/daemon.log for root, else
// $XDG_STATE_HOME/mcpsandbox/daemon.log ($HOME/.local/state when
// XDG_STATE_HOME is unset or, against the XDG spec, relative); "" when
// neither is set.
func DefaultFile(root bool, env func(string) string) string {
	if root {
		return "/var/log/mcpsandbox/daemon.log"
	}
	state := env("XDG_STATE_HOME")
	if !filepath.IsAbs(state) {
		home := env("HOME")
		if home == "" {
			return ""
		}
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(state, "mcpsandbox", "daemon.log")
}
