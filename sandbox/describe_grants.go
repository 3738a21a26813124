package sandbox

import (
	"log/slog"
	"os"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/sandbox/internal/initstage"
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
	u, standIn, err := describedUser(spec)
	if err != nil {
		return nil // describeUser says it
	}
	c := *cfg
	c.Binds = slices.DeleteFunc(slices.Clone(cfg.Binds), func(b initstage.Bind) bool {
		return b.State // made the server's own at the start, not granted
	})
	c.UID, c.GID, c.UserNS = u.uid, u.gid, u.userns
	err = planBindOwners(&c, spec.Seccomp == "default" && !spec.SeccompLog, slog.New(slog.DiscardHandler))
	if standIn {
		err = unnameStandIn(err, u.uid)
	}
	return err
}

// describedUser is chooseUser's answer without leasing a dynamic id: the
// owner of the state directory, which is the server's uid once it ran;
// else describeUID stands for the one it will get (the check
// asks only whether a grant's owner can be shown as the server, which
// holds for every dynamic uid but the grant owner's own).
func describedUser(spec Spec) (u *sandboxUser, standIn bool, err error) {
	switch {
	case os.Geteuid() != 0:
		u, err = unprivilegedUser(spec)
		return u, false, err
	case spec.User != "":
		u, err = namedUser(spec.User)
		return u, false, err
	}
	var st unix.Stat_t
	if spec.StateDir != "" && unix.Lstat(spec.StateDir, &st) == nil && isDynamicID(st.Uid) {
		return &sandboxUser{uid: st.Uid, gid: st.Uid, name: "sandbox"}, false, nil
	}
	return &sandboxUser{uid: describeUID, gid: describeUID, name: "sandbox"}, true, nil
}
