package resolve

import (
	"sync"

	"github.com/mcpsandbox/mcpsandbox/launch"
	"github.com/mcpsandbox/mcpsandbox/lock"
)

// StartCheck is the check before each start of a server that starts
// offline from packages a prepare fetched (launch's OfflineCheck): they
// are there, and when the lock at lockPath pins the server's package,
// they are the tarball it pins. The lock is read at the first start; each
// start reads npm's lockfile in the cache, one small file, and asks no
// registry. check is nil for a server that starts from no such cache.
func (r Resolution) StartCheck(lockPath string) (check func() error, prepare string) {
	offline, prepare := r.Launch.OfflineCheck(r.Policy)
	if offline == nil {
		return nil, ""
	}
	if _, ok := r.Launch.NpmSpec(); !ok {
		return offline, prepare
	}
	pinOnce := sync.OnceValues(func() (*launch.Pin, error) {
		f, err := lock.Load(lockPath)
		if err != nil {
			return nil, err
		}
		_, s, ok := f.Server(r.Launch.ID)
		if !ok || s.Package == nil {
			return nil, nil
		}
		return &launch.Pin{Version: s.Package.Version, Integrity: s.Package.Integrity, Lock: lockPath}, nil
	})
	return func() error {
		if err := offline(); err != nil {
			return err
		}
		pin, err := pinOnce()
		if err != nil || pin == nil {
			return err
		}
		return r.Launch.CheckPin(r.Policy, *pin)
	}, prepare
}

// LockPath is the lock the server's policy names (pins.lock, --lock),
// else def: the user's for run, the one beside a daemon's config.
func (r Resolution) LockPath(def func() (string, error)) (string, error) {
	if r.Policy.Lock != "" {
		return r.Policy.Lock, nil
	}
	return def()
}
