package sandbox

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/mcpsandbox/mcpsandbox/sandbox/internal/initstage"
	"golang.org/x/sys/unix"
)

// planBindOwners decides, in the supervisor, how the server reaches each
// --ro/--rw path. A dynamic uid owns nothing, so a grant owned by someone
// other than root gets its owner mapped to the server (idmap_mount.go), and
// a root-owned one the server could not use as it stands gets root's
// ownership lent (idmap_root.go). A --user NAME server keeps the host's
// permissions: the user chose whose files it may touch. A grant the server
// could not use is refused here with the fix (grant_access.go), rather than
// met by the server as a bare EACCES the host cannot explain.
// setIDRefused says the seccomp filter refuses set-ID modes (the default
// profile, enforcing).
func planBindOwners(cfg *initConfig, setIDRefused bool, log *slog.Logger) error {
	if cfg.UserNS {
		return checkCallerAccess(cfg) // the server runs as the caller
	}
	mapOwners := isDynamicID(cfg.UID)
	for i := range cfg.Binds {
		b := &cfg.Binds[i]
		fd, err := openNoSymlinks(unix.AT_FDCWD, b.Path, 0)
		if err != nil {
			continue // the init stage refuses it with advice
		}
		var st unix.Stat_t
		err = unix.Fstat(fd, &st)
		var noIDMap error
		if err == nil && mapOwners && st.Uid != cfg.UID {
			b.IDMap, noIDMap = planOwner(fd, *b, &st, cfg, setIDRefused)
		}
		acl := err == nil && hasACL(fd)
		unix.Close(fd)
		if err != nil {
			continue
		}
		if err := checkGrantAccess(*b, &st, cfg, noIDMap, acl, log); err != nil {
			return err
		}
	}
	return nil
}

// planOwner is the mapping of the grant b open at fd, or why there is none
// (nil, nil: none is needed). An owner is shown as the server only where
// the server cannot make set-ID files: the owner's (root's, for a
// root-owned grant) would run as the owner for every local user.
func planOwner(fd int, b initstage.Bind, st *unix.Stat_t, cfg *initConfig, setIDRefused bool) (*initstage.IDMap, error) {
	if st.Uid == 0 && !rootNeedsLending(b, st, cfg) {
		return nil, nil
	}
	if !setIDRefused {
		return nil, errors.New(lendingNeedsSeccomp(st.Uid))
	}
	if err := probeIDMap(fd); err != nil {
		return nil, err
	}
	return &initstage.IDMap{UID: st.Uid, GID: st.Gid}, nil
}

func isDynamicID(id uint32) bool {
	return id >= DynamicIDFirst && id-DynamicIDFirst < DynamicIDCount
}

// lendingNeedsSeccomp says why the owner uid of a grant is not shown as
// the server under a seccomp filter that lets set-ID modes through.
func lendingNeedsSeccomp(owner uint32) string {
	program := fmt.Sprintf("a set-user-ID program of uid %d", owner)
	if owner == 0 {
		program = "a set-user-ID root program"
	}
	return "an owner's files are shown to a server as its own only under the default seccomp profile, enforcing ({Seccomp} default, without {SeccompLog}), which refuses set-ID modes: under this one the server could leave " + program + " on the host"
}
