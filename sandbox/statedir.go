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
	"github.com/mcpsandbox/mcpsandbox/internal/pathrule"
	"github.com/mcpsandbox/mcpsandbox/sandbox/internal/initstage"
)

// Spec.StateDir is a host directory that is the server's own persistent
// state, as systemd's StateDirectory= is a service's: before the server
// starts the sandbox makes it (missing parents 0755, owned by whoever runs
// mcpsandbox; the directory itself 0700) owned by the uid the server runs
// as, and binds it read-write at the same path. A root supervisor's
// dynamic uid for a server with a state dir comes from that directory
// alone (identity.go), so the server gets the same uid and finds its files
// again whatever else of it changes. A directory someone else owns is refused, never chowned:
// only a new one, one the server's uid owns already, or (as root) an empty
// one of root's, made for the purpose, is used.

// stateDirBind checks the StateDir path against the grants and returns
// its bind.
func stateDirBind(p string, binds []initstage.Bind) (initstage.Bind, error) {
	b := initstage.Bind{Path: filepath.Clean(p), Writable: true, State: true}
	if !filepath.IsAbs(p) {
		return b, &field.Error{Field: "StateDir", Value: p, Problem: "the path must be absolute", Fix: "give the host path, e.g. /var/lib/mcp-notes"}
	}
	if b.Path == "/" {
		return b, &field.Error{Field: "StateDir", Value: p, Problem: "the host root cannot be a server's state", Fix: "name a directory of its own, e.g. /var/lib/mcp-notes"}
	}
	for _, r := range builtPaths() {
		if pathrule.Within(b.Path, r) {
			return b, &field.Error{Field: "StateDir", Value: p, Problem: r + " is no place for state", Fix: "name a directory such as /var/lib/mcp-notes"}
		}
	}
	for _, g := range binds {
		if g.Path == b.Path {
			return b, &field.Error{Field: "StateDir", Value: p, Problem: "is granted as {" + g.Field() + "} too", Fix: "drop that grant: {StateDir} binds it read-write"}
		}
	}
	return b, nil
}

// prepareStateDirFor prepares cfg's state dir, if any, for the user
// chooseUser gave it.
func prepareStateDirFor(cfg *initConfig) error {
	for _, b := range cfg.Binds {
		if b.State {
			return prepareStateDir(b.Path, cfg.UID, cfg.GID, !cfg.UserNS)
		}
	}
	return nil
}

// prepareStateDir makes the state dir at path owned by uid:gid, the
// server's ids on the host. asRoot: the supervisor may create and chown
// for another uid; otherwise uid is the caller's own.
func prepareStateDir(path string, uid, gid uint32, asRoot bool) error {
	parent, err := stateDirParent(path)
	if err != nil {
		return err
	}
	defer unix.Close(parent)
	leaf := filepath.Base(path)
	created := false
	if err := unix.Mkdirat(parent, leaf, 0o700); err == nil {
		created = true
	} else if !errors.Is(err, unix.EEXIST) {
		return stateDirError(path, "cannot be created", err)
	}
	fd, err := openDirNoSymlinks(parent, leaf)
	if err != nil {
		return stateDirError(path, "cannot be opened as a directory (a symlink or a file?)", err)
	}
	dir := os.NewFile(uintptr(fd), path)
	defer dir.Close()
	if created {
		return giveStateDir(fd, path, uid, gid, asRoot)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return stateDirError(path, "cannot be examined", err)
	}
	if st.Uid == uid {
		return nil // this server's, from an earlier run: kept as it is
	}
	owner := fmt.Sprintf("is owned by uid %d (mode %o), not by uid %d, which this server runs as", st.Uid, st.Mode&0o7777, uid)
	fix := fmt.Sprintf("name a new directory for {StateDir} (it is created), or, if this one holds this server's state, chown -R %d:%d %s", uid, gid, path)
	if !asRoot || st.Uid != 0 {
		return &field.Error{Field: "StateDir", Value: path, Problem: owner + "; a directory of someone else's is never taken over", Fix: fix}
	}
	// Root's own directory: taken over only while empty, i.e. made for it.
	if _, err := dir.Readdirnames(1); err != io.EOF {
		if err != nil {
			return stateDirError(path, "cannot be listed", err)
		}
		return &field.Error{Field: "StateDir", Value: path, Problem: owner + " and is not empty, so it is not taken over", Fix: fix}
	}
	return giveStateDir(fd, path, uid, gid, true)
}

// giveStateDir makes the open state dir the server's: owned by uid:gid
// (chown: the supervisor is root and may give it away) and mode 0700,
// which the umask may have narrowed.
func giveStateDir(fd int, path string, uid, gid uint32, chown bool) error {
	if chown {
		if err := unix.Fchown(fd, int(uid), int(gid)); err != nil {
			return stateDirError(path, "cannot be given to the server's uid", err)
		}
	}
	if err := unix.Fchmod(fd, 0o700); err != nil {
		return stateDirError(path, "cannot be made mode 0700", err)
	}
	return nil
}

// openDirNoSymlinks opens the directory name beneath dirfd for reading
// and changing (openNoSymlinks' O_PATH descriptors allow neither),
// following no symlink.
func openDirNoSymlinks(dirfd int, name string) (int, error) {
	return unix.Openat2(dirfd, name, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
}

// stateDirParent opens path's parent, making the directories missing on
// the way (0755, owned by the caller) and following no symlink.
func stateDirParent(path string) (int, error) {
	cur, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, stateDirError(path, "cannot be reached", err)
	}
	names := strings.Split(strings.Trim(filepath.Dir(path), "/"), "/")
	for i, name := range names {
		if name == "" {
			continue
		}
		next, err := openNoSymlinks(cur, name, unix.O_DIRECTORY)
		if errors.Is(err, unix.ENOENT) {
			if err = unix.Mkdirat(cur, name, 0o755); err == nil {
				next, err = stateDirParentMade(cur, name)
			} else if errors.Is(err, unix.EEXIST) {
				next, err = openNoSymlinks(cur, name, unix.O_DIRECTORY)
			}
		}
		unix.Close(cur)
		if err != nil {
			at := "/" + strings.Join(names[:i+1], "/")
			return -1, stateDirError(path, "its parent "+at+" cannot be made or opened without following symlinks", err)
		}
		cur = next
	}
	return cur, nil
}

// stateDirParentMade opens a parent just made and sets its mode, which
// the umask may have narrowed.
func stateDirParentMade(dirfd int, name string) (int, error) {
	fd, err := openDirNoSymlinks(dirfd, name)
	if err != nil {
		return -1, err
	}
	if err := unix.Fchmod(fd, 0o755); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

func stateDirError(path, problem string, err error) error {
	fix := "name a directory you may create, or create it yourself owned by the server's uid"
	if errors.Is(err, unix.ELOOP) {
		fix = "pass the real path, without symlinks"
	}
	return &field.Error{Field: "StateDir", Value: path, Problem: problem, Err: err, Fix: fix}
}
