package sandbox

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/user"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// When the supervisor runs as root, every running server gets a uid and gid
// of its own from [DynamicIDFirst, DynamicIDFirst+DynamicIDCount): no two
// running servers share one, and none is a real account. The block lies in
// the range systemd documents as unused (1879048192–2147483647), far above
// normal users, dynamic service users and container ranges.
const (
	DynamicIDFirst = 1_900_000_000
	DynamicIDCount = 65536
)

// dynamicIDLockDir holds one lock file per id; the supervisor running a
// server keeps an flock on its id's file, which ties allocation to the
// lifetime of that supervisor process (a crashed one frees its ids).
var dynamicIDLockDir = "/run/mcpsandbox/ids"

// sandboxUser is who the server runs as.
type sandboxUser struct {
	uid, gid uint32 // as seen inside the sandbox
	name     string // in the synthesized /etc/passwd
	userns   bool   // unprivileged supervisor: map uid/gid in a user namespace
	lease    *idLease
}

func (u *sandboxUser) release() {
	if u != nil && u.lease != nil {
		u.lease.release()
	}
}

// chooseUser decides the server's user. It never returns host uid 0.
func chooseUser(spec Spec) (*sandboxUser, error) {
	if os.Geteuid() != 0 {
		return unprivilegedUser(spec)
	}
	if spec.User != "" {
		return namedUser(spec.User)
	}
	lease, err := leaseDynamicID(spec.Name)
	if err != nil {
		return nil, err
	}
	return &sandboxUser{uid: lease.id, gid: lease.id, name: "sandbox", lease: lease}, nil
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

// idLease is a held dynamic id.
type idLease struct {
	id uint32
	f  *os.File
}

func (l *idLease) release() { l.f.Close() }

// leaseDynamicID takes a free id, starting from one derived from name so a
// restarted server usually gets its previous id back (and keeps owning the
// files it created).
func leaseDynamicID(name string) (*idLease, error) {
	if err := os.MkdirAll(dynamicIDLockDir, 0o700); err != nil {
		return nil, &field.Error{Problem: "allocating a sandbox uid", Err: err, Fix: "make " + filepath.Dir(dynamicIDLockDir) + " writable for root, or give the server {User}"}
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	start := h.Sum32() % DynamicIDCount
	for i := uint32(0); i < DynamicIDCount; i++ {
		id := DynamicIDFirst + (start+i)%DynamicIDCount
		f, err := os.OpenFile(filepath.Join(dynamicIDLockDir, strconv.FormatUint(uint64(id), 10)), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return nil, fmt.Errorf("allocating a sandbox uid: %v", err)
		}
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return &idLease{id: id, f: f}, nil
		}
		f.Close()
		if err != unix.EWOULDBLOCK {
			return nil, fmt.Errorf("allocating a sandbox uid: lock %d: %v", id, err)
		}
	}
	return nil, fmt.Errorf("allocating a sandbox uid: all %d ids from %d are in use", DynamicIDCount, DynamicIDFirst)
}
