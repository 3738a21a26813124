package sandbox

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/sandbox/internal/initstage"
)

// A grant the server cannot use is refused before it starts: otherwise the
// server only meets EACCES, and the host sees a tool failing for no reason
// it is told. A --ro grant must be readable (and searchable, a directory),
// a --rw one writable as well. An idmapped --rw grant of a user's whose
// group is root counts as unwritable: a user's grant never maps gid 0, and
// the kernel refuses writes through an idmapped mount to inodes it cannot
// map, so not one file could be made in it; that the server could still
// read it does not make it the read-write grant asked for, and the fix
// (chgrp, or --ro) is one command. A root-owned grant lent to the server
// maps its group too (idmap_root.go).
//
// As root the check reads the mode bits as the kernel would for the
// server's uid and gid (it has no supplementary groups); an ACL may allow
// what they do not, so a grant with one is let through with a warning.
// Unprivileged, the server has the caller's uid and groups, so the
// kernel's own answer for the caller (faccessat2) is exact.

// accessNeed is the permission bits (r=4, w=2, x=1) the server needs on a
// grant with mode mode.
func accessNeed(b initstage.Bind, mode uint32) uint32 {
	need := uint32(0o4)
	if mode&unix.S_IFMT == unix.S_IFDIR {
		need |= 0o1
	}
	if b.Writable {
		need |= 0o2
	}
	return need
}

// uidModeBits are the bits of st's mode (r=4, w=2, x=1) that apply to the
// server's uid: the owner's for its own file or a mapped owner's, which is
// shown as the server; else the group's or the others'.
func uidModeBits(b initstage.Bind, st *unix.Stat_t, cfg *initConfig) uint32 {
	switch {
	case b.IDMap != nil, st.Uid == cfg.UID:
		return st.Mode >> 6 & 0o7
	case st.Gid == cfg.GID:
		return st.Mode >> 3 & 0o7
	}
	return st.Mode & 0o7
}

func accessVerb(b initstage.Bind) string {
	if b.Writable {
		return "read and write"
	}
	return "read"
}

// checkGrantAccess refuses a grant the server's uid cannot use; noIDMap is
// why its owner could not be mapped, if that was tried.
func checkGrantAccess(b initstage.Bind, st *unix.Stat_t, cfg *initConfig, noIDMap error, acl bool, log *slog.Logger) error {
	owner := fmt.Sprintf("%d:%d", st.Uid, st.Gid)
	if b.IDMap != nil && b.IDMap.UID != 0 && b.Writable && st.Gid == 0 {
		return &field.Error{Field: b.Field(), Value: b.Path,
			Problem: "its group is root (owner " + owner + "), which is never mapped to the server (uid " + strconv.FormatUint(uint64(cfg.UID), 10) + "): the kernel would refuse every write in it",
			Fix:     fmt.Sprintf("chgrp it to the owner's group (chgrp %d %s), or grant it {ReadOnly}", st.Uid, b.Path)}
	}
	have, need := uidModeBits(b, st, cfg), accessNeed(b, st.Mode)
	mode := fmt.Sprintf("%o", st.Mode&0o7777)
	attrs := []any{"field", b.Field(), "path", b.Path, "uid", cfg.UID, "owner", owner, "mode", mode}
	switch {
	case have&need == need && noIDMap != nil && b.Writable:
		log.Info("sandbox: a read-write grant keeps its owner unmapped; files the server creates there will be owned by its uid", append(attrs, "idmap", "not used: "+noIDMap.Error())...)
		return nil
	case have&need == need:
		return nil
	case acl:
		log.Warn("sandbox: a grant's mode bits do not let the server's uid "+accessVerb(b)+" it; its ACL may", attrs...)
		return nil
	}
	if b.IDMap != nil {
		return &field.Error{Field: b.Field(), Value: b.Path,
			Problem: fmt.Sprintf("is owned by %s with mode %s: it is shown to the server (uid %d) as its own, and its owner may not %s it", owner, mode, cfg.UID, accessVerb(b)),
			Fix:     fmt.Sprintf("chmod u+%s %s", permLetters(need), b.Path)}
	}
	problem := fmt.Sprintf("is owned by %s with mode %s, and the server runs as uid %d, which may not %s it", owner, mode, cfg.UID, accessVerb(b))
	if noIDMap != nil {
		problem += "; its owner cannot be shown as the server: " + noIDMap.Error()
	}
	fix := fmt.Sprintf("chown or chmod it so uid %d may %s it, or run the server as a user who can ({User})", cfg.UID, accessVerb(b))
	return &field.Error{Field: b.Field(), Value: b.Path, Problem: problem, Fix: fix}
}

// permLetters writes need (r=4, w=2, x=1) as chmod's letters.
func permLetters(need uint32) string {
	var s string
	for i, c := range "rwx" {
		if need&(0o4>>i) != 0 {
			s += string(c)
		}
	}
	return s
}

// checkCallerAccess is the unprivileged check: the server is the caller.
func checkCallerAccess(cfg *initConfig) error {
	for _, b := range cfg.Binds {
		fd, err := openNoSymlinks(unix.AT_FDCWD, b.Path, 0)
		if err != nil {
			continue // the init stage refuses it with advice
		}
		var st unix.Stat_t
		err = unix.Fstat(fd, &st)
		if err == nil {
			mode := uint32(0)
			need := accessNeed(b, st.Mode)
			if need&0o4 != 0 {
				mode |= unix.R_OK
			}
			if need&0o2 != 0 {
				mode |= unix.W_OK
			}
			if need&0o1 != 0 {
				mode |= unix.X_OK
			}
			err = unix.Faccessat2(fd, "", mode, unix.AT_EMPTY_PATH|unix.AT_EACCESS)
		}
		unix.Close(fd)
		if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EROFS) {
			return &field.Error{Field: b.Field(), Value: b.Path,
				Problem: fmt.Sprintf("is owned by %d:%d with mode %o, and the server runs as you (uid %d), who may not %s it", st.Uid, st.Gid, st.Mode&0o7777, cfg.UID, accessVerb(b)),
				Err:     err,
				Fix:     "chown or chmod it so you may " + accessVerb(b) + " it, or run mcpsandbox as a user who can"}
		}
	}
	return nil
}

// hasACL reports whether the inode at fd (O_PATH) has an access ACL.
func hasACL(fd int) bool {
	n, err := unix.Getxattr("/proc/self/fd/"+strconv.Itoa(fd), "system.posix_acl_access", nil)
	return err == nil && n > 0
}
