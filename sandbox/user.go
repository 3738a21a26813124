package sandbox

import (
	"errors"
	"os"
	"os/user"
	"strconv"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// When the supervisor runs as root, every server gets a uid and gid of its
// own from [DynamicIDFirst, DynamicIDFirst+DynamicIDCount), none a real
// account. The block lies in the range systemd documents as unused
// (1879048192–2147483647), far above normal users, dynamic service users and
// container ranges; it is large because an id, once given to a server, is
// never given to another (idregistry.go).
//
// The uid identifies the server (identity.go): it is derived from what the
// server is and what it can reach, so that a restart keeps it and any other
// server, even one with the same command name, has another. An
// unprivileged supervisor cannot do this: all its servers run as the
// caller's one uid (in user namespaces of their own), and what separates
// them is their mount namespaces, each holding only its own grants; a file
// in a grant two servers share is reachable by both.
const (
	DynamicIDFirst = 1_900_000_000
	DynamicIDCount = 1 << 24
)

// sandboxUser is who the server runs as.
type sandboxUser struct {
	uid, gid uint32 // as seen inside the sandbox
	name     string // in the synthesized /etc/passwd
	userns   bool   // unprivileged supervisor: map uid/gid in a user namespace
}

// chooseUser decides the user of the server cfg describes. It never returns
// host uid 0.
func chooseUser(spec Spec, cfg *initConfig) (*sandboxUser, error) {
	if os.Geteuid() != 0 {
		return unprivilegedUser(spec)
	}
	if spec.User != "" {
		return namedUser(spec.User)
	}
	id, err := leaseDynamicID(identityKey(cfg, spec), spec.Name)
	if err != nil {
		return nil, err
	}
	return &sandboxUser{uid: id, gid: id, name: "sandbox"}, nil
}

// unprivilegedUser maps the caller's own uid and gid into a user namespace;
// the User setting can only name the caller.
func unprivilegedUser(spec Spec) (*sandboxUser, error) {
	uid, gid := os.Getuid(), os.Getgid()
	if uid == 0 {
		return nil, errors.New("sandbox: the real uid is 0 but the effective uid is not; run mcpsandbox as root or as a plain user")
	}
	name := "sandbox"
	if spec.User != "" {
		u, err := user.Lookup(spec.User)
		if err != nil {
			return nil, &field.Error{Field: "User", Value: spec.User, Err: err}
		}
		if u.Uid != strconv.Itoa(uid) {
			return nil, &field.Error{Field: "User", Value: spec.User, Problem: "switching to another user needs mcpsandbox to run as root", Fix: "drop {User} to run as yourself"}
		}
		name = u.Username
	}
	return &sandboxUser{uid: uint32(uid), gid: uint32(gid), name: name, userns: true}, nil
}

func namedUser(name string) (*sandboxUser, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, &field.Error{Field: "User", Value: name, Err: err}
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, &field.Error{Field: "User", Value: name, Problem: "unusable uid/gid " + u.Uid + "/" + u.Gid, Fix: "pick another user"}
	}
	if uid == 0 || gid == 0 {
		return nil, &field.Error{Field: "User", Value: name, Problem: "servers never run as uid or gid 0", Fix: "pick an unprivileged user or drop {User}"}
	}
	return &sandboxUser{uid: uint32(uid), gid: uint32(gid), name: u.Username}, nil
}
