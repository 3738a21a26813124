package sandbox

import (
	"log/slog"

	"github.com/mcpsandbox/mcpsandbox/sandbox/internal/initstage"
	"golang.org/x/sys/unix"
)

// planBindOwners decides, in the supervisor, how the server reaches each
// --ro/--rw path. A dynamic uid owns nothing, so a grant owned by someone
// other than root gets its owner mapped to the server (idmap_mount.go).
// A --user NAME server keeps the host's permissions: the user chose whose
// files it may touch. A grant the server could not use is refused here
// with the fix (grant_access.go), rather than met by the server as a bare
// EACCES the host cannot explain.
func planBindOwners(cfg *initConfig, log *slog.Logger) error {
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
		if err == nil && mapOwners && st.Uid != 0 && st.Uid != cfg.UID {
			if noIDMap = probeIDMap(fd); noIDMap == nil {
				b.IDMap = &initstage.IDMap{UID: st.Uid, GID: st.Gid}
			}
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

func isDynamicID(id uint32) bool {
	return id >= DynamicIDFirst && id-DynamicIDFirst < DynamicIDCount
}
