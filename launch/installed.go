package launch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// What npx installed is in the lockfile npm keeps beside the packages,
// _npx/HASH/node_modules/.package-lock.json: each package's version, the
// tarball it came from and that tarball's integrity. Reading it is one
// small file, cheap enough for every start; the packages' own files are
// not hashed (the server may write its cache).

// maxLockfile bounds what is read of npm's lockfile: the server owns the
// cache, and a large server's tree is a few hundred KiB.
const maxLockfile = 8 << 20

// Installed is a package as npx installed it.
type Installed struct {
	Name, Version, Resolved, Integrity string
}

// Installed is the package of the launch line (NpmSpec) as npx installed
// it in the cache it starts from offline under p; an error when the line
// installs no such package or it cannot be read.
func (l Launch) Installed(p policy.Policy) (Installed, error) {
	spec, ok := l.NpmSpec()
	cache := l.npxCache(p)
	if !ok || cache == "" {
		return Installed{}, errors.New("the launch line installs no npm package offline from a cache of mcpsandbox's")
	}
	dir, complete := l.npxDir(cache)
	if !complete {
		return Installed{}, fmt.Errorf("%s is not installed completely in %s", spec.Name, cache)
	}
	rel, err := filepath.Rel(l.StateDir, filepath.Join(dir, "node_modules", ".package-lock.json"))
	if err != nil {
		return Installed{}, err
	}
	data, err := readBeneath(l.StateDir, rel, maxLockfile)
	if err != nil {
		return Installed{}, fmt.Errorf("reading what npx installed: %w", err)
	}
	var lockfile struct {
		Packages map[string]struct{ Version, Resolved, Integrity string } `json:"packages"`
	}
	if err := json.Unmarshal(data, &lockfile); err != nil {
		return Installed{}, fmt.Errorf("reading what npx installed: %s: %v", filepath.Join(l.StateDir, rel), err)
	}
	pkg, ok := lockfile.Packages["node_modules/"+spec.Name]
	if !ok {
		return Installed{}, fmt.Errorf("reading what npx installed: %s names no %s", filepath.Join(l.StateDir, rel), spec.Name)
	}
	return Installed{Name: spec.Name, Version: pkg.Version, Resolved: pkg.Resolved, Integrity: pkg.Integrity}, nil
}

// Pin is the package version a lock pins for a server.
type Pin struct {
	Version, Integrity string
	Lock               string // the lock's file, for messages
}

// CheckPin says how the package installed for the launch line under p
// differs from pin (its error names both and the fixes), or nil when it
// is the one pinned. Only for a line whose cache run starts from offline
// (OfflineCheck), the only one whose installed package is known before
// it starts.
func (l Launch) CheckPin(p policy.Policy, pin Pin) error {
	got, err := l.Installed(p)
	if err != nil {
		return &field.Error{
			Problem: fmt.Sprintf("the lock %s pins %s %s, and which version is installed cannot be told: %v", pin.Lock, l.Name, pin.Version, err),
			Fix:     fmt.Sprintf("prepare it again with `%s`", l.pinnedPrepare(pin)),
		}
	}
	if got.Integrity != "" && got.Integrity == pin.Integrity {
		return nil
	}
	what := fmt.Sprintf("the installed %s is %s (%s), but the lock %s pins %s (%s)", got.Name, got.Version, orNone(got.Integrity), pin.Lock, pin.Version, pin.Integrity)
	if got.Version == pin.Version {
		what += ": the same version from another tarball"
	}
	return &field.Error{
		Problem: what,
		Fix: fmt.Sprintf("run the pinned version, prepared with `%s`; or review and pin the installed one with `mcpsandbox upgrade %s --to %s` (`mcpsandbox pins list %s` shows the pin)",
			l.pinnedPrepare(pin), got.Name, got.Version, got.Name),
	}
}

// pinnedPrepare is the prepare command of the launch line at the pinned
// version.
func (l Launch) pinnedPrepare(pin Pin) string {
	line := l.WithVersion(pin.Version)
	if line == nil {
		return l.PrepareCommand()
	}
	return Launch{Given: line}.PrepareCommand()
}

func orNone(integrity string) string {
	if integrity == "" {
		return "no integrity recorded"
	}
	return integrity
}

// readBeneath reads the regular file rel within base, following no
// symbolic link (the server owns its state directory and could point one
// anywhere), at most max bytes.
func readBeneath(base, rel string, max int64) ([]byte, error) {
	if rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return nil, fmt.Errorf("%s is not within %s", rel, base)
	}
	dir, err := os.Open(base)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	fd, err := unix.Openat2(int(dir.Fd()), rel, &unix.OpenHow{
		Flags:   uint64(unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: filepath.Join(base, rel), Err: err}
	}
	f := os.NewFile(uintptr(fd), filepath.Join(base, rel))
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is no regular file", f.Name())
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(data)) > max {
		err = fmt.Errorf("%s is larger than %d bytes", f.Name(), max)
	}
	return data, err
}
