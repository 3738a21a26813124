package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/sandbox/internal/initstage"
)

// A unix socket a host program listens on inside a grant (an agent's in a
// granted home directory, a dev server's, docker.sock) would let the server
// talk to that program: connect(2) needs write permission on the socket
// file, which its owner has, and works through a read-only bind as well, so
// read-only grants count too. Before the server starts, the grants are
// searched for sockets and the init stage covers each with an empty
// read-only file (init_root.c's mask_sockets), so connecting fails with
// ECONNREFUSED. A socket made after the start stays reachable: doctor and
// README name that limit.
//
// The search reads directory entries only (their type comes with the entry,
// no stat), breadth first, so the shallow places where programs put their
// sockets come first. It stops after socketSearchLimit entries in all
// grants, since it runs at every start and a home directory can hold
// millions; the description (policy explain) then says where it stopped.

// socketSearchLimit bounds the directory entries one start reads.
var socketSearchLimit = 100_000

// socketSearchDepth bounds how far below a grant's top the search goes.
const socketSearchDepth = 32

// socketSearch is what the search found.
type socketSearch struct {
	Sockets []string // paths, the same inside and outside
	Cut     string   // "" or where and why the search stopped
}

// findGrantSockets searches every directory grant, each but for the grants
// nested in it (searched on their own: their mounts cover its files there).
// A socket granted by itself is the user's wish and stays reachable.
func findGrantSockets(binds []initstage.Bind) socketSearch {
	covered := make(map[string]bool, len(binds))
	for _, b := range binds {
		covered[b.Path] = true
	}
	s := &socketWalk{covered: covered}
	var unsearched []string
	for _, b := range binds {
		if s.stopped {
			unsearched = append(unsearched, b.Path)
			continue
		}
		s.grant(b.Path)
	}
	if len(unsearched) > 0 {
		s.cuts = append(s.cuts, "not searched: "+strings.Join(unsearched, ", "))
	}
	return socketSearch{Sockets: s.found, Cut: strings.Join(s.cuts, "; ")}
}

type socketWalk struct {
	covered map[string]bool
	entries int
	found   []string
	cuts    []string
	stopped bool // socketSearchLimit was reached
}

// grant searches one grant breadth first.
func (s *socketWalk) grant(top string) {
	root, err := unix.Openat2(unix.AT_FDCWD, top, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return // the init stage refuses it with advice
	}
	defer unix.Close(root)
	var st unix.Stat_t
	if unix.Fstat(root, &st) != nil {
		return
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return
	}
	level := []string{"."}
	for depth := 0; len(level) > 0; depth++ {
		if depth > socketSearchDepth {
			s.cuts = append(s.cuts, fmt.Sprintf("directories more than %d levels below %s were not searched", socketSearchDepth, top))
			return
		}
		var next []string
		for _, rel := range level {
			subdirs, ok := s.dir(root, top, rel)
			if !ok {
				return
			}
			next = append(next, subdirs...)
		}
		level = next
	}
}

// dir reads the directory rel beneath root and returns its subdirectories;
// false when the entry limit was reached.
func (s *socketWalk) dir(root int, top, rel string) ([]string, bool) {
	fd, err := unix.Openat2(root, rel, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NONBLOCK | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil, true // closed to the caller (unprivileged: to the server too) or gone
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	var subdirs []string
	for {
		ents, err := f.ReadDir(1024)
		for _, e := range ents {
			if s.entries++; s.entries > socketSearchLimit {
				s.stopped = true
				s.cuts = append(s.cuts, fmt.Sprintf("the search stopped after %d entries, in %s: the rest of %s was not searched", socketSearchLimit, filepath.Join(top, rel), top))
				return nil, false
			}
			child := filepath.Join(rel, e.Name())
			if s.covered[filepath.Join(top, child)] {
				continue
			}
			switch e.Type() {
			case os.ModeSocket:
				s.found = append(s.found, filepath.Join(top, child))
			case os.ModeDir:
				subdirs = append(subdirs, child)
			}
		}
		if errors.Is(err, io.EOF) || err != nil || len(ents) == 0 {
			return subdirs, true
		}
	}
}
