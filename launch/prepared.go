package launch

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/internal/pathrule"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// An npx server started offline installs from what its prepare left in
// the cache. A prepare that failed or was stopped leaves a half-filled
// cache, from which the start fails without a word, again and again. So
// prepare records its success per launch line (a marker written only
// after npx exited 0), and run refuses an npx server whose packages were
// not prepared, at once, naming the command that prepares them.

// preparedDir holds the markers, in the server's state directory.
const preparedDir = ".mcpsandbox-prepared"

// ErrUnprepared: an offline npx server whose packages were not prepared.
var ErrUnprepared = errors.New("the server's packages were not prepared")

// npxCache is the npm cache the launch line's npx installs from offline
// under p, within the state directory; "" when the launch line is no npx
// line, or p lets npx fetch (then nothing needs preparing) or keeps its
// cache elsewhere (not mcpsandbox's to judge).
func (l Launch) npxCache(p policy.Policy) string {
	if len(l.Given) == 0 || family(filepath.Base(l.Given[0])) != "npx" || len(l.line.specs) == 0 ||
		p.Unconfined || !p.State || l.StateDir == "" {
		return ""
	}
	if v, _ := envValue(p.Env, "npm_config_offline"); v != "true" {
		return ""
	}
	cache, ok := envValue(p.Env, "npm_config_cache")
	if !ok || !pathrule.Within(filepath.Clean(cache), l.StateDir) {
		return ""
	}
	return filepath.Clean(cache)
}

// envValue is name's value as env sets it (npm reads its variables in any
// case); a bare NAME passes the caller's own, which is unknown here.
func envValue(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		k, v, ok := strings.Cut(env[i], "=")
		if strings.EqualFold(k, name) {
			return v, ok
		}
	}
	return "", false
}

// Unprepared says why the launch line cannot start under p (wrapping
// ErrUnprepared, naming the prepare command), or nil when it can: its
// packages were prepared, or it needs none. An older mcpsandbox wrote no
// marker: its cache counts as prepared when npx's directory for the
// specs is complete.
func (l Launch) Unprepared(p policy.Policy) error {
	cache := l.npxCache(p)
	if cache == "" {
		return nil
	}
	dir, complete := l.npxDir(cache)
	_, err := os.Lstat(l.markerPath())
	marked := err == nil
	if complete || marked && dir == "" && !l.registrySpecs() {
		return nil
	}
	what := "were never prepared"
	if _, err := os.Lstat(cache); err == nil {
		what = "were not prepared completely (a prepare failed or was stopped)"
	}
	return unprepared{&field.Error{
		Problem: fmt.Sprintf("the packages of %s %s, and the server installs offline from its cache", strings.Join(l.line.specs, " "), what),
		Fix:     fmt.Sprintf("prepare them once with `%s`, or let every start download them ({Policy} default, {Net} host)", l.PrepareCommand()),
	}}
}

// unprepared is Unprepared's error: its settings rendered the caller's
// way, and errors.Is ErrUnprepared.
type unprepared struct{ e *field.Error }

func (u unprepared) Error() string                  { return u.e.Error() }
func (u unprepared) Render(name field.Namer) string { return u.e.Render(name) }
func (unprepared) Is(target error) bool             { return target == ErrUnprepared }

// OfflineCheck is, for a launch line that starts offline under p from
// packages a prepare fetched, the check that they are there (Unprepared)
// and the command that prepares them; check is nil for any other.
func (l Launch) OfflineCheck(p policy.Policy) (check func() error, prepare string) {
	if l.npxCache(p) == "" {
		return nil, ""
	}
	return func() error { return l.Unprepared(p) }, l.PrepareCommand()
}

// PrepareCommand is the command that prepares the launch line.
func (l Launch) PrepareCommand() string {
	return "mcpsandbox prepare -- " + cmdline.ShellJoin(l.Given)
}

// BeginPrepare readies the cache for a prepare of the launch line under
// p: the marker goes (until this prepare succeeds), and so does what a
// failed or stopped npx left behind, a directory of _npx without its
// package.json, which makes every later npx fail with ENOENT.
func (l Launch) BeginPrepare(p policy.Policy) error {
	cache := l.npxCache(p)
	if cache == "" {
		return nil
	}
	if err := os.Remove(l.markerPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	npx := filepath.Join(cache, "_npx")
	if !realDirs(l.StateDir, npx) {
		return nil
	}
	ents, err := os.ReadDir(npx)
	if err != nil {
		return nil
	}
	for _, e := range ents {
		if inUse(filepath.Join(npx, e.Name())) {
			continue // another npx is installing there now
		}
		if _, err := os.Lstat(filepath.Join(npx, e.Name(), "package.json")); errors.Is(err, fs.ErrNotExist) {
			if err := os.RemoveAll(filepath.Join(npx, e.Name())); err != nil {
				return fmt.Errorf("removing what an earlier npx left half-installed: %w", err)
			}
		}
	}
	return nil
}

// FinishPrepare records how a prepare of the launch line under p ended:
// the marker when it succeeded, else npx's directory for the specs goes,
// whatever it holds, so that the next prepare starts clean.
func (l Launch) FinishPrepare(p policy.Policy, succeeded bool) error {
	cache := l.npxCache(p)
	if cache == "" {
		return nil
	}
	if !succeeded {
		for _, h := range npxHashes(l.line.specs) {
			if d := filepath.Join(cache, "_npx", h); realDirs(l.StateDir, d) && !inUse(d) {
				if err := os.RemoveAll(d); err != nil {
					return err
				}
			}
		}
		return nil
	}
	dir := filepath.Join(l.StateDir, preparedDir)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if !realDirs(l.StateDir, dir) {
		return fmt.Errorf("%s is no directory", dir)
	}
	return os.WriteFile(l.markerPath(), []byte(strings.Join(l.line.specs, "\n")+"\n"), 0o644)
}

// markerPath is the marker of the launch line's specs: prepare again
// after changing one.
func (l Launch) markerPath() string {
	specs := slices.Sorted(slices.Values(l.line.specs))
	sum := sha256.Sum256([]byte(strings.Join(specs, "\n")))
	return filepath.Join(l.StateDir, preparedDir, "npx-"+hex.EncodeToString(sum[:8]))
}

// npxDir finds npx's directory for the launch line's specs in cache, and
// whether it is complete: npx wrote its package.json last, and every
// package named is installed.
func (l Launch) npxDir(cache string) (dir string, complete bool) {
	for _, h := range npxHashes(l.line.specs) {
		d := filepath.Join(cache, "_npx", h)
		if !realDirs(l.StateDir, d) {
			continue
		}
		if _, err := os.Lstat(filepath.Join(d, "package.json")); err != nil {
			return d, false
		}
		for _, s := range l.line.specs {
			if name := npmLine(s).pkg; name != "" {
				if _, err := os.Lstat(filepath.Join(d, "node_modules", name, "package.json")); err != nil {
					return d, false
				}
			}
		}
		return d, true
	}
	return "", false
}

// registrySpecs: every spec names a registry package, so npx's directory
// for them can be found.
func (l Launch) registrySpecs() bool {
	return !slices.ContainsFunc(l.line.specs, func(s string) bool { return npmLine(s).pkg == "" })
}

// npxHashes are the names npx may give the directory of specs in its
// cache: the first 16 hex digits of the SHA-512 of the specs, sorted, one
// a line. npx sorts by the locale's collation, which Go does not have,
// so each order of a few specs is a candidate; a single spec has one.
func npxHashes(specs []string) []string {
	var hashes []string
	var permute func(rest, done []string)
	permute = func(rest, done []string) {
		if len(rest) == 0 {
			sum := sha512.Sum512([]byte(strings.Join(done, "\n")))
			hashes = append(hashes, hex.EncodeToString(sum[:8]))
			return
		}
		for i := range rest {
			others := append(slices.Clone(rest[:i]), rest[i+1:]...)
			permute(others, append(slices.Clone(done), rest[i]))
		}
	}
	if len(specs) > 5 {
		specs = slices.Sorted(slices.Values(specs))
		permute(nil, specs)
		return hashes
	}
	permute(specs, nil)
	return hashes
}

// npxLockStale is when npx takes its lock on a directory of _npx for
// abandoned: a live npx touches it every second.
const npxLockStale = 60 * time.Second

// inUse: a live npx holds dir's lock (another prepare, or a start that is
// installing), so what it holds is not to be removed under it.
func inUse(dir string) bool {
	st, err := os.Lstat(filepath.Join(dir, "concurrency.lock"))
	return err == nil && time.Since(st.ModTime()) < npxLockStale
}

// realDirs: every path from base down to dir is a directory, not a
// symbolic link. The server owns its state directory and could point a
// link anywhere; mcpsandbox, perhaps root, removes nothing through one.
func realDirs(base, dir string) bool {
	rel, err := filepath.Rel(base, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return false
	}
	p := base
	for _, part := range append([]string{"."}, strings.Split(rel, "/")...) {
		p = filepath.Join(p, part)
		st, err := os.Lstat(p)
		if err != nil || !st.IsDir() {
			return false
		}
	}
	return true
}
