package logsink

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// rotatingFile is a log file that is renamed to NAME.1 (NAME.1 to NAME.2 …,
// the oldest past keep removed) before a write would take it past max, as
// logrotate names them. Each Write is one record (slog's text handler writes
// a record at once), so a record is never split across files, and one larger
// than max still goes, alone, into a file of its own.
//
// Why not lumberjack (gopkg.in/natefinch/lumberjack.v2): it removes old
// files on a goroutine that Close neither waits for nor ends, so more than
// Keep files stay behind a while after each rotation; its sizes are whole
// MiB; it creates the directory 0755.
type rotatingFile struct {
	name   string
	max    int64
	keep   int
	stderr io.Writer // told when a rotation fails

	mu       sync.Mutex
	f        *os.File
	size     int64
	stuck    bool // the last rotation failed; writing on past max
	isClosed bool
}

// openRotating opens (appending) or creates name 0600, its directory 0700
// when missing.
func openRotating(name string, max int64, keep int, stderr io.Writer) (*rotatingFile, error) {
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return nil, fmt.Errorf("log file %s: %w; choose a log file in a directory this user can write", name, err)
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("log file %s: %w; choose a log file this user can write", name, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("log file %s: %w", name, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("log file %s is not a regular file, so it cannot be rotated; choose a file", name)
	}
	return &rotatingFile{name: name, max: max, keep: keep, stderr: stderr, f: f, size: st.Size()}, nil
}

func (r *rotatingFile) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.isClosed {
		return 0, os.ErrClosed
	}
	if r.size > 0 && r.size+int64(len(p)) > r.max {
		if err := r.rotate(); err != nil {
			// Keep the record: write on into the file we have.
			if !r.stuck {
				fmt.Fprintf(r.stderr, "mcpsandbox: rotating the log %s: %v; writing on past its size limit\n", r.name, err)
			}
			r.stuck = true
		} else {
			r.stuck = false
		}
	}
	n, err := r.f.Write(p)
	r.size += int64(n)
	return n, err
}

// rotate shifts NAME.i to NAME.i+1 (NAME.keep is overwritten, so dropped),
// NAME to NAME.1, and puts a new file at NAME. The new file is made first
// and the old one stays open until the new one is in place, so a failure
// leaves the current file where it was, to write on into.
func (r *rotatingFile) rotate() error {
	next := r.name + ".new"
	f, err := os.OpenFile(next, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if err := r.shift(next); err != nil {
		f.Close()
		os.Remove(next)
		return err
	}
	r.f.Close()
	r.f, r.size = f, 0
	return nil
}

func (r *rotatingFile) shift(next string) error {
	r.removeBeyondKeep()
	for i := r.keep - 1; i >= 1; i-- {
		err := os.Rename(r.rotated(i), r.rotated(i+1))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := os.Rename(r.name, r.rotated(1)); err != nil {
		return err
	}
	if err := os.Rename(next, r.name); err != nil {
		os.Rename(r.rotated(1), r.name)
		return err
	}
	return nil
}

func (r *rotatingFile) rotated(i int) string { return r.name + "." + strconv.Itoa(i) }

// removeBeyondKeep removes NAME.N for N > keep, left by a run with a larger keep.
func (r *rotatingFile) removeBeyondKeep() {
	matches, _ := filepath.Glob(globEscape(r.name) + ".*")
	for _, m := range matches {
		n, err := strconv.Atoi(strings.TrimPrefix(m, r.name+"."))
		if err == nil && n > r.keep {
			os.Remove(m)
		}
	}
}

// globEscape quotes the pattern characters filepath.Match knows.
func globEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func (r *rotatingFile) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.isClosed {
		return nil
	}
	r.isClosed = true
	return r.f.Close()
}
