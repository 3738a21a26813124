package audit

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// file appends lines to the audit log and rotates it by size, taking turns
// with every other process that writes the same file: each batch of lines
// is written under an exclusive flock on the file, after checking that the
// file held is still the one at the path. Only its writer goroutine uses it.
//
// The lock is on the log itself rather than on a file beside it, so that
// nothing but the log and its generations appears in the directory. A
// rotation renames the file while its lock is held; whoever waited on that
// lock then finds another file at the path and reopens, so a full file is
// rotated once, and no line goes into a file already rotated away.
type file struct {
	path string
	max  int64 // rotate before a line would take the file past it; 0: never
	keep int   // rotated generations kept: FILE.1 (the newest) to FILE.keep
	f    *os.File
	size int64 // while locked: the file's size, others' writes included
	buf  []byte
}

// openFile opens (or creates, mode 0600) the audit log for appending.
// narrowed says an existing file was readable by others and is now 0600.
func openFile(path string, max int64, keep int) (f *file, narrowed bool, err error) {
	f = &file{path: path, max: max, keep: keep}
	narrowed, err = f.open()
	return f, narrowed, err
}

// open refuses a symbolic link (O_NOFOLLOW) and anything but a regular file
// of this user, so the log cannot be pointed at someone else's file; a
// FIFO fails at once (O_NONBLOCK) rather than blocking the start.
func (a *file) open() (narrowed bool, err error) {
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
	a.f = f
	return narrowed, nil
}

// lock takes the file's lock, (re)opening the file at the path first when
// it has none or another process rotated the one it held.
func (a *file) lock() error {
	for tries := 0; ; tries++ {
		if a.f == nil {
			if _, err := a.open(); err != nil {
				return err
			}
		}
		if err := flock(a.f, unix.LOCK_EX); err != nil {
			return fmt.Errorf("locking the audit log: %w", err)
		}
		var held, here unix.Stat_t
		if err := fstat(a.f, &held); err != nil {
			a.drop()
			return err
		}
		err := unix.Lstat(a.path, &here)
		if err == nil && held.Dev == here.Dev && held.Ino == here.Ino {
			a.size = held.Size
			return nil
		}
		// Rotated away (or, for a moment, not yet replaced): take the file
		// now at the path. Only a rotation can move the file, and each
		// needs a full file, so this does not go round for long.
		a.drop()
		if err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("checking the audit log: %w", err)
		}
		if tries == 100 {
			return errors.New("the audit log kept being replaced while mcpsandbox tried to write it")
		}
	}
}

// unlock lets other processes write.
func (a *file) unlock() {
	if a.f != nil && flock(a.f, unix.LOCK_UN) != nil {
		a.drop() // closing it releases the lock
	}
}

// drop closes the file (releasing its lock); the next write opens the one
// at the path.
func (a *file) drop() {
	if a.f != nil {
		a.f.Close()
		a.f = nil
	}
}

// write appends lines, each whole, rotating first when a line would take
// the file past max (a line longer than max alone still goes to a fresh
// file). A failed rotation keeps appending to the current file.
func (a *file) write(lines [][]byte) error {
	for len(lines) > 0 {
		if err := a.lock(); err != nil {
			return err
		}
		a.buf = a.buf[:0]
		n := 0
		for ; n < len(lines); n++ {
			next := a.size + int64(len(a.buf)) + int64(len(lines[n]))
			if a.max > 0 && a.size+int64(len(a.buf)) > 0 && next > a.max {
				break
			}
			a.buf = append(a.buf, lines[n]...)
		}
		lines = lines[n:]
		var rotErr error
		if len(lines) > 0 {
			if err := a.append(a.buf); err != nil {
				a.unlock()
				return err
			}
			if rotErr = a.rotate(); rotErr == nil {
				continue // the lock went with the old file: take the new one's
			}
			a.buf = a.buf[:0]
			for _, l := range lines {
				a.buf = append(a.buf, l...)
			}
			lines = nil
		}
		err := a.append(a.buf)
		a.unlock()
		if err != nil {
			return err
		}
		return rotErr
	}
	return nil
}

func (a *file) append(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	n, err := a.f.Write(b)
	a.size += int64(n)
	return err
}

// rotate, with the lock held, renames FILE.(keep-1) to FILE.keep (replacing
// it), ..., FILE to FILE.1, and closes FILE, which releases its lock.
// Renamed files keep their mode, 0600.
func (a *file) rotate() error {
	gen := func(n int) string { return a.path + "." + strconv.Itoa(n) }
	for n := a.keep - 1; n >= 1; n-- {
		if err := os.Rename(gen(n), gen(n+1)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("rotating the audit log: %w", err)
		}
	}
	if err := os.Rename(a.path, gen(1)); err != nil {
		return fmt.Errorf("rotating the audit log: %w", err)
	}
	a.drop()
	return nil
}

func (a *file) close() { a.drop() }

func flock(f *os.File, how int) error {
	return control(f, func(fd int) error {
		for {
			if err := unix.Flock(fd, how); err != unix.EINTR {
				return err
			}
		}
	})
}

func fstat(f *os.File, st *unix.Stat_t) error {
	return control(f, func(fd int) error { return unix.Fstat(fd, st) })
}

// control runs op on f's descriptor without making it blocking (as Fd
// would).
func control(f *os.File, op func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var opErr error
	if err := rc.Control(func(fd uintptr) { opErr = op(int(fd)) }); err != nil {
		return err
	}
	return opErr
}
