package supervisor

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// auditGenerations is how many rotated audit files are kept: FILE.1 (the
// newest) to FILE.3.
const auditGenerations = 3

// auditFile appends lines to the audit log and rotates it by size. Only
// the audit writer goroutine uses it.
type auditFile struct {
	path string
	max  int64 // rotate before a line would take the file past it; 0: never
	f    *os.File
	size int64
}

// openAuditFile opens (or creates, mode 0600) the audit log for appending.
// narrowed says an existing file was readable by others and is now 0600.
func openAuditFile(path string, max int64) (a *auditFile, narrowed bool, err error) {
	a = &auditFile{path: path, max: max}
	narrowed, err = a.open()
	return a, narrowed, err
}

// open refuses a symbolic link (O_NOFOLLOW) and anything but a regular file
// of this user, so the log cannot be pointed at someone else's file; a
// FIFO fails at once (O_NONBLOCK) rather than blocking the start.
func (a *auditFile) open() (narrowed bool, err error) {
	f, err := os.OpenFile(a.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return false, errors.New("it is a symbolic link; give the path of the file itself")
		}
		return false, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return false, err
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.Mode().IsRegular():
		f.Close()
		return false, fmt.Errorf("it is not a regular file (%s)", fi.Mode().Type())
	case st != nil && int(st.Uid) != os.Geteuid():
		f.Close()
		return false, fmt.Errorf("it belongs to uid %d, not to the user mcpsandbox runs as (%d)", st.Uid, os.Geteuid())
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := f.Chmod(0o600); err != nil {
			f.Close()
			return false, fmt.Errorf("it is readable by others (%v) and could not be made 0600: %w", fi.Mode().Perm(), err)
		}
		narrowed = true
	}
	a.f, a.size = f, fi.Size()
	return narrowed, nil
}

// write appends one line, first rotating when the line would take the file
// past max (a line longer than max alone still goes to a fresh file). A
// failed rotation keeps appending to the current file.
func (a *auditFile) write(line []byte) error {
	var rotErr error
	if a.f == nil {
		if _, err := a.open(); err != nil {
			return err
		}
	} else if a.max > 0 && a.size > 0 && a.size+int64(len(line)) > a.max {
		rotErr = a.rotate()
		if a.f == nil {
			return rotErr
		}
	}
	n, err := a.f.Write(line)
	a.size += int64(n)
	if err == nil {
		err = rotErr
	}
	return err
}

// rotate renames FILE.2 to FILE.3 (replacing it), FILE.1 to FILE.2, FILE to
// FILE.1 and opens a fresh FILE. Renamed files keep their mode, 0600.
func (a *auditFile) rotate() error {
	gen := func(n int) string { return a.path + "." + strconv.Itoa(n) }
	for n := auditGenerations - 1; n >= 1; n-- {
		if err := os.Rename(gen(n), gen(n+1)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("rotating the audit log: %w", err)
		}
	}
	if err := os.Rename(a.path, gen(1)); err != nil {
		return fmt.Errorf("rotating the audit log: %w", err)
	}
	a.f.Close()
	a.f = nil
	if _, err := a.open(); err != nil {
		return fmt.Errorf("reopening the audit log after rotating it: %w", err)
	}
	return nil
}

func (a *auditFile) close() error {
	if a.f == nil {
		return nil
	}
	return a.f.Close()
}
