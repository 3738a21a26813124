package sandbox

import (
	"fmt"
	"log/slog"

	"github.com/mcpsandbox/mcpsandbox/sandbox/internal/initstage"
	"golang.org/x/sys/unix"
)

// planBindOwners decides, in the supervisor, how the server reaches each
// --ro/--rw path. A dynamic uid owns nothing, so a grant owned by someone
// other than root gets its owner mapped to the server (idmap_mount.go).
// A --user NAME server keeps the host's permissions: the user chose whose
// files it may touch. What the server cannot use is logged with the fix.
func planBindOwners(cfg *initConfig, log *slog.Logger) {
	if cfg.UserNS {
		return // the server runs as the caller, who owns the grants
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
				warnRootGroup(*b, &st, log)
			}
		}
		unix.Close(fd)
		if err == nil && b.IDMap == nil {
			warnInaccessible(*b, &st, cfg, noIDMap, log)
		}
	}
}

// warnRootGroup says when a mapped --rw grant still cannot be written: the
// kernel refuses writes through an idmapped mount to any inode whose owner
// or group it cannot map, and gid 0 is never mapped.
func warnRootGroup(b initstage.Bind, st *unix.Stat_t, log *slog.Logger) {
	if b.Writable && st.Gid == 0 {
		log.Warn("sandbox: a read-write grant's group is root, which is never mapped to the server: it can read the grant but not write in it; chgrp it to the owner's group",
			"field", b.Field(), "path", b.Path, "owner", fmt.Sprintf("%d:%d", st.Uid, st.Gid))
	}
}

// warnInaccessible says when the server's uid will not be able to use a
// grant (mode bits only; ACLs may still allow it), since the server would
// only see EACCES. noIDMap is why the owner could not be mapped, if tried.
func warnInaccessible(b initstage.Bind, st *unix.Stat_t, cfg *initConfig, noIDMap error, log *slog.Logger) {
	need := uint32(0o4) // read
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		need |= 0o1 // search
	}
	if b.Writable {
		need |= 0o2
	}
	var have uint32
	switch {
	case st.Uid == cfg.UID:
		have = st.Mode >> 6 & 0o7
	case st.Gid == cfg.GID:
		have = st.Mode >> 3 & 0o7
	default:
		have = st.Mode & 0o7
	}
	attrs := []any{"field", b.Field(), "path", b.Path, "uid", cfg.UID, "owner", fmt.Sprintf("%d:%d", st.Uid, st.Gid), "mode", fmt.Sprintf("%o", st.Mode&0o7777)}
	if noIDMap != nil {
		attrs = append(attrs, "idmap", "not used: "+noIDMap.Error())
	} else if st.Uid == 0 {
		attrs = append(attrs, "idmap", "not used: root-owned grants are never mapped to the server")
	}
	switch {
	case have&need == need && noIDMap != nil && b.Writable:
		log.Info("sandbox: a read-write grant keeps its owner unmapped; files the server creates there will be owned by its uid", attrs...)
	case have&need == need:
	case b.Writable:
		log.Warn("sandbox: a read-write grant is not writable by the server's uid; chown it to a non-root user, chmod it, or name a user for the server (User)", attrs...)
	default:
		log.Warn("sandbox: a read-only grant is not readable by the server's uid; chown it to a non-root user, chmod it, or name a user for the server (User)", attrs...)
	}
}

func isDynamicID(id uint32) bool {
	return id >= DynamicIDFirst && id-DynamicIDFirst < DynamicIDCount
}
