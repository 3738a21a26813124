package sandbox

import (
	"log/slog"
	"os"
	"slices"

	"golang.org/x/sys/unix"
)

// CheckGrants says whether Start would refuse spec's grants, as it would
// say it: laid out, then checked for the server's user (grant_access.go).
// It starts, leases and changes nothing, so that `mcpsandbox wrap
// --dry-run` refuses what wrap's start would.
func CheckGrants(spec Spec) error {
	if spec.Unconfined {
		return nil
	}
	cfg, err := layoutConfig(spec)
	if err != nil {
		return err
	}
	return grantsUsable(spec, cfg)
}

// grantsUsable is planBindOwners' verdict for the user the server will
// run as, without leasing one.
func grantsUsable(spec Spec, cfg *initConfig) error {
	u, err := describedUser(spec)
	if err != nil {
		return nil // describeUser says it
	}
	c := *cfg
	c.Binds = slices.Clone(cfg.Binds)
	c.UID, c.GID, c.UserNS = u.uid, u.gid, u.userns
	return planBindOwners(&c, slog.New(slog.DiscardHandler))
}

// describedUser is chooseUser's answer without leasing a dynamic id: the
// owner of the state directory, which is the server's uid once it ran;
// else the first dynamic id stands for the one it will get (the check
// asks only whether a grant's owner can be shown as the server, which
// holds for every dynamic uid but the grant owner's own).
func describedUser(spec Spec) (*sandboxUser, error) {
	switch {
	case os.Geteuid() != 0:
		return unprivilegedUser(spec)
	case spec.User != "":
		return namedUser(spec.User)
	}
	id := uint32(DynamicIDFirst)
	var st unix.Stat_t
	if spec.StateDir != "" && unix.Lstat(spec.StateDir, &st) == nil && isDynamicID(st.Uid) {
		id = st.Uid
	}
	return &sandboxUser{uid: id, gid: id, name: "sandbox"}, nil
}
