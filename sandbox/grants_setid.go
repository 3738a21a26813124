package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/sandbox/internal/initstage"
)

// A set-user-ID or set-group-ID program in a read-write grant is a way out:
// a write(2) clears the bits, but a write through a MAP_SHARED mapping does
// not, so a server could replace the program's code and the host's other
// users would then run it as its owner (in an idmapped grant the server is
// the owner) or its group. Nothing in the sandbox can tell those files
// apart once it runs: seccomp sees no modes, Landlock has no rule for them,
// and nosuid inside protects nobody on the host. So before the server
// starts, every read-write grant is searched, and one that holds such a
// file the server could open for writing is refused. The server itself
// cannot make one (seccomp refuses set-ID modes, seccomp/modes.go), so the
// search at start covers what it can reach.
//
// It costs a stat per regular file: 5000 files in 100 directories take about
// 7 ms here when cached (BenchmarkSetIDSearch). A grant of more than
// setIDSearchLimit entries is refused rather than searched for seconds.

// setIDSearchLimit bounds the entries one start searches in all read-write
// grants.
var setIDSearchLimit = 1_000_000

// setIDNamed is how many of the files found an error names.
const setIDNamed = 5

// checkSetIDInGrants refuses the first read-write grant holding set-ID
// regular files outside any nested grant (a nested read-only grant covers
// the files beneath it; a nested read-write one is searched on its own).
func checkSetIDInGrants(binds []initstage.Bind) error {
	covered := make(map[string]bool, len(binds))
	for _, b := range binds {
		covered[b.Path] = true
	}
	s := &setIDSearch{covered: covered}
	for _, b := range binds {
		if !b.Writable {
			continue
		}
		s.found = s.found[:0]
		if err := s.grant(b.Path); err != nil {
			return &field.Error{Field: b.Field(), Value: b.Path, Problem: "cannot be searched for set-user-ID and set-group-ID files", Err: err,
				Fix: "grant a smaller directory, or grant it {ReadOnly}"}
		}
		if len(s.found) > 0 {
			return setIDError(b, s.found)
		}
	}
	return nil
}

func setIDError(b initstage.Bind, found []string) error {
	names := found
	if len(names) > setIDNamed {
		names = names[:setIDNamed]
	}
	list := strings.Join(names, ", ")
	if more := len(found) - len(names); more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	return &field.Error{Field: b.Field(), Value: b.Path,
		Problem: "holds set-user-ID or set-group-ID files (" + list + "): the server could rewrite them through a shared mapping, which keeps the bits, and they would then run as their owner or group for other users",
		Fix:     "clear the bits (chmod u-s,g-s), move the files out of the grant, or grant them or their directory {ReadOnly} as well"}
}

type setIDSearch struct {
	covered map[string]bool // every grant's path
	entries int
	found   []string // "path (mode)"
}

func (s *setIDSearch) grant(path string) error {
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil // the init stage refuses it with advice
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		unix.Close(fd)
		s.check(path, &st)
		return nil
	}
	return s.dir(fd, path)
}

// dir searches the directory open at fd, which it closes.
func (s *setIDSearch) dir(fd int, path string) error {
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	for {
		ents, err := f.ReadDir(1024)
		for _, e := range ents {
			if s.entries++; s.entries > setIDSearchLimit {
				return fmt.Errorf("the read-write grants hold more than %d entries", setIDSearchLimit)
			}
			child := filepath.Join(path, e.Name())
			if s.covered[child] {
				continue
			}
			if t := e.Type(); t != 0 && t != os.ModeDir {
				continue // links, devices, sockets, pipes (0 is a regular file)
			}
			if err := s.entry(fd, e.Name(), child); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) || (err == nil && len(ents) == 0) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
}

// entry looks at name in the directory fd: a regular file is checked, a
// directory searched.
func (s *setIDSearch) entry(fd int, name, path string) error {
	var st unix.Stat_t
	if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil // gone meanwhile
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		s.check(path, &st)
	case unix.S_IFDIR:
		sub, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		switch {
		case errors.Is(err, unix.EACCES), errors.Is(err, unix.ENOENT):
			return nil // closed to the caller (unprivileged: to the server too) or gone
		case err != nil:
			return fmt.Errorf("%s: %w", path, err)
		}
		return s.dir(sub, path)
	}
	return nil
}

func (s *setIDSearch) check(path string, st *unix.Stat_t) {
	if st.Mode&unix.S_IFMT == unix.S_IFREG && st.Mode&(unix.S_ISUID|unix.S_ISGID) != 0 {
		s.found = append(s.found, fmt.Sprintf("%s (mode %o)", path, st.Mode&0o7777))
	}
}
