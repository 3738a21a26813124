package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// MoveStateDir moves a server's state directory from where an earlier
// mcpsandbox kept it (under a name it no longer gives) to its place now,
// before the server first starts there. Ownership goes with it: as root,
// the dynamic uid that owns it, recorded for the old path's key
// (identity.go), is recorded for the new path's instead, so the server
// keeps its uid and every file that uid owns. A directory whose uid is
// recorded for another server is not moved.
func MoveStateDir(from, to string) error {
	from, to = filepath.Clean(from), filepath.Clean(to)
	if _, err := os.Lstat(to); err == nil {
		return fmt.Errorf("moving the state directory %s: %s exists already", from, to)
	}
	var st unix.Stat_t
	if err := unix.Lstat(from, &st); err != nil {
		return fmt.Errorf("moving the state directory: %w", err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return fmt.Errorf("moving the state directory: %s is not a directory", from)
	}
	if os.Geteuid() == 0 && st.Uid >= DynamicIDFirst && st.Uid < DynamicIDFirst+DynamicIDCount {
		if err := moveUID(st.Uid, stateDirKey(from), stateDirKey(to), filepath.Base(to)); err != nil {
			return fmt.Errorf("moving the state directory %s: %w", from, err)
		}
	}
	if err := os.Rename(from, to); err != nil {
		return fmt.Errorf("moving the state directory: %w", err)
	}
	return syncDir(filepath.Dir(to))
}

// moveUID records id, recorded for the key from, for the key to. Done
// before the directory moves, and accepted again when already done, so
// that a crash in between is finished by the next start.
func moveUID(id uint32, from, to serverKey, label string) error {
	if err := openRegistry(); err != nil {
		return err
	}
	p := filepath.Join(idRegistry, strconv.FormatUint(uint64(id), 10))
	owner, err := registryOwner(p)
	if err != nil {
		return fmt.Errorf("reading uid %d's entry: %w", id, err)
	}
	switch owner {
	case to.String():
		return nil
	case from.String():
	default:
		return fmt.Errorf("its owner, uid %d, is recorded in %s for another server", id, p)
	}
	if other, err := recordedUID(to); err != nil || other != 0 {
		if err == nil {
			err = fmt.Errorf("the new place's server has uid %d already", other)
		}
		return err
	}
	return replaceEntry(p, to.String()+"\n"+label+"\n")
}

// replaceEntry writes content over the registry entry p, whole: written
// aside and renamed into place, durable before the directory moves.
func replaceEntry(p, content string) error {
	tmp, err := writeAside(filepath.Dir(p), content)
	if err == nil {
		if err = os.Rename(tmp, p); err != nil {
			os.Remove(tmp)
		}
	}
	if err != nil {
		return fmt.Errorf("recording the uid for the new place: %w", err)
	}
	return syncDir(filepath.Dir(p))
}
