package daemon

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Where the daemons listen: a user's in its runtime directory (private to
// the user, removed at logout), root's in /run for every user of the
// machine, each gated by the peer check.
const (
	SocketName      = "daemon.sock"
	SystemSocketDir = "/run/mcpsandbox"
	lockName        = "daemon.lock"
)

// SocketDir is the directory a daemon listens in when not told: root's is
// SystemSocketDir, a user's $XDG_RUNTIME_DIR/mcpsandbox.
func SocketDir(root bool, lookupEnv func(string) (string, bool)) (string, error) {
	if root {
		return SystemSocketDir, nil
	}
	if dir, ok := lookupEnv("XDG_RUNTIME_DIR"); ok && dir != "" {
		return filepath.Join(dir, "mcpsandbox"), nil
	}
	return "", errors.New("XDG_RUNTIME_DIR is not set, so there is no runtime directory of yours for the daemon's socket: give one with --socket-dir DIR (a directory only you may enter), or start the daemon from a login session (pam_systemd sets it)")
}

// ClientSockets are the sockets a client of uid tries, in turn, when not
// told which: the user daemon's, then the system daemon's. Hosts built on
// the TypeScript SDK pass their servers no XDG_RUNTIME_DIR, so without it
// the user's runtime directory is the one pam_systemd makes, /run/user/UID,
// as systemd's own tools find it.
func ClientSockets(uid int, lookupEnv func(string) (string, bool)) []string {
	var socks []string
	if dir, err := SocketDir(false, lookupEnv); err == nil {
		socks = append(socks, filepath.Join(dir, SocketName))
	} else if uid != 0 {
		socks = append(socks, filepath.Join("/run/user", strconv.Itoa(uid), "mcpsandbox", SocketName))
	}
	return append(socks, filepath.Join(SystemSocketDir, SocketName))
}

// listener is the daemon's socket and the lock that makes it the only
// daemon of its directory.
type listener struct {
	*net.UnixListener
	path string
	lock *os.File
}

// listen makes dir (private: 0700; shared, a root daemon's, 0755 with a
// socket anyone may connect to, the peer check being the gate), takes its
// lock, which a second daemon finds held, replaces a stale socket and
// listens.
func listen(dir string, shared bool) (*listener, error) {
	dirMode, sockMode := os.FileMode(0o700), os.FileMode(0o600)
	if shared {
		dirMode, sockMode = 0o755, 0o666
	}
	if err := ownDir(dir, dirMode); err != nil {
		return nil, err
	}
	lock, err := takeLock(dir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, SocketName)
	// With the lock held, a socket there is a dead daemon's.
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		lock.Close()
		return nil, fmt.Errorf("removing the stale socket %s: %w", path, err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("listening on %s: %w", path, unwrapOp(err))
	}
	if err := os.Chmod(path, sockMode); err != nil {
		ln.Close()
		lock.Close()
		return nil, err
	}
	return &listener{UnixListener: ln, path: path, lock: lock}, nil
}

// close removes the socket, then gives up the lock.
func (l *listener) close() {
	l.UnixListener.Close() // unlinks the socket
	os.Remove(filepath.Join(filepath.Dir(l.path), lockName))
	l.lock.Close()
}

// ownDir makes dir with mode, or checks that an existing one is this
// user's and writable by nobody else (a socket there could be replaced by
// another user). A directory it did not make keeps its mode.
func ownDir(dir string, mode os.FileMode) error {
	if err := os.Mkdir(dir, mode); err == nil {
		return os.Chmod(dir, mode) // past the umask
	} else if !errors.Is(err, os.ErrExist) {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("socket directory %s: its parent does not exist: create it, or give another --socket-dir", dir)
		}
		return fmt.Errorf("socket directory %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("socket directory %s is not a directory: remove it, or give another --socket-dir", dir)
	case st != nil && int(st.Uid) != os.Geteuid():
		return fmt.Errorf("socket directory %s belongs to uid %d, not to this daemon's uid %d: give a directory of your own with --socket-dir", dir, st.Uid, os.Geteuid())
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("socket directory %s is writable by others (mode %04o), who could replace the socket: chmod go-w it, or give another --socket-dir", dir, fi.Mode().Perm())
	}
	return nil
}

// takeLock locks dir's lock file for this daemon's life and writes its
// pid there; held by another, it names that daemon.
func takeLock(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("daemon lock %s: %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			b := make([]byte, 32)
			n, _ := f.ReadAt(b, 0)
			pid := strings.TrimSpace(string(b[:n]))
			if pid == "" {
				pid = "unknown"
			}
			return nil, &RunningError{Dir: dir, Pid: pid}
		}
		return nil, fmt.Errorf("daemon lock %s: %w", path, err)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return f, nil
}

// RunningError: another daemon holds the directory.
type RunningError struct {
	Dir string
	Pid string
}

func (e *RunningError) Error() string {
	return fmt.Sprintf("a daemon is already running in %s, pid %s: stop it first (mcpsandbox reload applies a changed config), or give another --socket-dir", e.Dir, e.Pid)
}
