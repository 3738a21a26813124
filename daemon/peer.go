package daemon

import (
	"fmt"
	"net"
	"os/user"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// peer is who is on the other end of a connection, as the kernel says
// (SO_PEERCRED: the credentials the client had when it connected).
type peer struct {
	UID, GID, Pid int
}

func peerOf(c *net.UnixConn) (peer, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return peer{}, err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return peer{}, err
	}
	if credErr != nil {
		return peer{}, fmt.Errorf("SO_PEERCRED: %w", credErr)
	}
	return peer{UID: int(cred.Uid), GID: int(cred.Gid), Pid: int(cred.Pid)}, nil
}

// allowed is who may connect to one server: its uids (names looked up when
// the config was loaded), or anyone. The daemon's own uid always may: the
// instances run with its rights anyway.
type allowed struct {
	any   bool
	uids  []int
	names []string // as the config gave them, for messages
}

func (a allowed) has(uid, self int) bool {
	return a.any || uid == self || slices.Contains(a.uids, uid)
}

func (a allowed) String() string {
	if a.any {
		return "any user"
	}
	if len(a.names) == 0 {
		return "the daemon's own user only"
	}
	return strings.Join(a.names, ", ")
}

// uidName is "uid 1000 (alice)", or "uid 4242" for a uid with no name.
func uidName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return fmt.Sprintf("uid %d (%s)", uid, u.Username)
	}
	return fmt.Sprintf("uid %d", uid)
}

// controlAllowed: control requests are the daemon's own user's, and root's.
func controlAllowed(uid, self int) bool { return uid == self || uid == 0 }
