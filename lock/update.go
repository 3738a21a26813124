package lock

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Update changes the lock at path under an exclusive lock of the sibling file
// PATH.lck: it loads the lock, calls fn, and writes the result atomically
// (a temporary file, fsync, rename), mode 0644, making the parent directory
// (0755) if need be. An error from Load or fn leaves the file as it was. The
// flock is held per open file, so goroutines and processes alike queue.
func Update(path string, fn func(*File) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	lck, err := os.OpenFile(path+".lck", os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	defer lck.Close()
	if err := flock(lck); err != nil {
		return fmt.Errorf("lock: cannot lock %s: %w", lck.Name(), err)
	}
	f, old, err := load(path)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		return err
	}
	data := f.Marshal()
	if bytes.Equal(data, old) {
		return nil
	}
	return writeAtomic(path, data)
}

func flock(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			return err
		}
	}
}

// writeAtomic replaces path with data so that a reader sees the old file or
// the new one, never a part, even across a crash.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("lock: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("lock: writing %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("lock: writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("lock: writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
