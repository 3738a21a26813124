package sandbox

import (
	"github.com/mcpsandbox/mcpsandbox/sandbox/internal/initstage"
	"golang.org/x/sys/unix"
)

// A root user (a system service, a container, a CI runner) grants root's
// own directories: `--rw /srv/notes`. The server's dynamic uid could not
// use such a grant, so root's ownership is lent to it through an idmapped
// mount, as a user's is (idmap_mount.go): inside, host uid 0 and the
// directory's group are the server's own ids; what it writes lands on the
// host as root's, with the directory's group. Lending is safe only because
// the server cannot use what it would own:
//   - set-ID modes: seccomp refuses every call that would set S_ISUID or
//     S_ISGID (seccomp/modes.go), so no owner, root least, is lent but
//     under the default profile, enforcing (planOwner); a write clears the
//     bits the kernel's way (the server has no CAP_FSETID), and a
//     read-write grant that holds set-ID files already is refused
//     (grants_setid.go);
//   - file capabilities and trusted xattrs need capabilities it lacks;
//   - the mount is nosuid and nodev, and read-only for --ro;
//   - other owners' files in the grant stay unmapped: readable by their
//     "other" bits, never writable (the kernel refuses writes to inodes it
//     cannot map);
//   - nothing outside the grant changes owner.
//
// Root's ownership is lent only where the grant could not be given
// otherwise: a root-owned grant whose mode lets the server's uid do what
// it asks (a world-readable --ro /usr/share/dict, a 1777 --rw scratch
// directory) is bound as it is, so root-only files beneath it (--ro /etc
// holds /etc/shadow) stay closed to the server.

// rootNeedsLending reports whether the root-owned grant b (stat st) would
// be refused to the server's uid without root's ownership (b not yet
// idmapped).
func rootNeedsLending(b initstage.Bind, st *unix.Stat_t, cfg *initConfig) bool {
	need := accessNeed(b, st.Mode)
	return uidModeBits(b, st, cfg)&need != need
}
