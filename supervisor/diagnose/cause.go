package diagnose

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// StderrLines is how much of a failed start's stderr is worth reading: a
// node stack trace runs to a dozen lines after the error.
const StderrLines = 64

// StartFailure reads the stderr lines of a server that failed before it
// served (the last StderrLines are enough) and says what of the
// confinement kept it from starting; false when nothing did, as far as it
// can tell (a restart may then help). It tries what the lines say, the
// last line first, and returns the first cause the host confirms.
//
// Unlike a tool error's (grantable.go), this diagnosis reads the host:
// whether the path exists, where its links lead, the modes on its way.
// That is no oracle for the server: a diagnosed start failure is
// permanent, the relay stops the server at once and starts it no more, so
// the answer never reaches it through the relay; it goes to the log and to
// the host's error for a server that never served (whose tools the model
// never saw). What it
// recommends granting is never one of the places no hint names
// (neverGranted, Facts.Own).
func StartFailure(stderr []string, f Facts) (Diagnosis, bool) {
	for _, found := range findCauses(stderr) {
		if d, ok := causeOf(found, &f); ok {
			d.Permanent = true
			return d, true
		}
	}
	return Diagnosis{}, false
}

func causeOf(found stderrFinding, f *Facts) (Diagnosis, bool) {
	switch found.pattern.kind {
	case causeEnv:
		return envCause(found.path, f)
	case causeOffline:
		if f.Net == f.NetHost {
			return Diagnosis{}, false
		}
		return Diagnosis{Kind: Offline, Path: found.path, Setting: "Net", net: f.Net, netHost: f.NetHost, egress: f.Net == f.NetEgress && f.NetEgress != "", command: strings.Join(f.Command, " ")}, true
	}
	fsys := f.fs()
	p := filepath.Clean(found.path)
	real, err := fsys.EvalSymlinks(p)
	if err != nil {
		if found.pattern.kind == causeMissing && errors.Is(err, fs.ErrNotExist) {
			if arg, ok := f.scriptArg(p, found.pattern.entry); ok {
				d := Diagnosis{Kind: ScriptMissing, Path: p, Setting: "Command"}
				if arg != "" {
					d.arg, d.workDir = arg, f.WorkDir
				}
				return d, true
			}
		}
		if found.pattern.kind != causeReadOnly {
			return Diagnosis{}, false // not on the host either: a file really missing
		}
		real = p // a file being created
	}
	switch found.pattern.kind {
	case causeMissing, causeDenied:
		if f.visible(real) {
			if found.pattern.kind == causeDenied {
				return deniedCause(p, real, f)
			}
			return Diagnosis{}, false
		}
		d := Diagnosis{Kind: NotGranted, Path: p, Setting: "ReadOnly", grantDir: f.grantDir(real, found)}
		if f.ungrantable(d.grantDir) || d.grantDir == "/" {
			return Diagnosis{}, false
		}
		if real != p && f.visible(p) {
			d.real = real
		}
		return d, true
	case causeReadOnly:
		g, writable := f.grantOf(real)
		if writable {
			return Diagnosis{}, false
		}
		d := Diagnosis{Kind: ReadOnlyGrant, Path: p, Setting: "ReadWrite", grant: g}
		d.stateEnv, d.stateFile = knownStateEnv(real)
		return d, true
	}
	return Diagnosis{}, false
}

// scriptArg reports whether path, missing on the host, is the script the
// server's command runs: an argument names it (resolved from the working
// directory when relative; arg is then that argument), or the runtime said
// so (entry: python's "can't open file" is only ever about its script).
// No restart can make it appear: the command line is wrong.
func (f *Facts) scriptArg(path string, entry bool) (arg string, ok bool) {
	for i, a := range f.Command {
		if i == 0 || a == "" {
			continue
		}
		if filepath.IsAbs(a) {
			if filepath.Clean(a) == path {
				return "", true
			}
		} else if f.WorkDir != "" && filepath.Join(f.WorkDir, a) == path {
			return a, true
		}
	}
	return "", entry
}

// deniedCause explains a permission error on a granted path: the server
// runs as a fresh unprivileged user (when mcpsandbox is root and no user
// is given), so the host's permissions for others apply.
func deniedCause(p, real string, f *Facts) (Diagnosis, bool) {
	if !f.Root || f.User != "" {
		return Diagnosis{}, false
	}
	fsys := f.fs()
	for dir := "/"; ; {
		fi, err := fsys.Stat(dir)
		if err != nil {
			return Diagnosis{}, false
		}
		final := dir == real
		need := os.FileMode(0o001) // others may pass through
		if final {
			need = 0o004 // others may read
		}
		if fi.Mode().Perm()&need == 0 {
			return Diagnosis{Kind: Denied, Path: p, Setting: "User", dir: dir, mode: fi.Mode().Perm(), final: final}, true
		}
		if final {
			return Diagnosis{}, false
		}
		rest := strings.TrimPrefix(strings.TrimPrefix(real, dir), "/")
		next, _, _ := strings.Cut(rest, "/")
		dir = filepath.Join(dir, next)
	}
}

// visible reports whether the sandbox shows the host's path: it is in /usr
// or in a grant.
func (f *Facts) visible(path string) bool {
	if pathWithin(path, "/usr") {
		return true
	}
	g, _ := f.grantOf(path)
	return g != ""
}

// grantOf returns the innermost grant holding path, and whether it is
// writable; "" when none does.
func (f *Facts) grantOf(path string) (grant string, writable bool) {
	fsys := f.fs()
	for _, list := range []struct {
		paths    []string
		writable bool
	}{{f.ReadOnly, false}, {f.ReadWrite, true}} {
		for _, g := range list.paths {
			g = filepath.Clean(g)
			if real, err := fsys.EvalSymlinks(g); err == nil && pathWithin(path, real) && len(real) > len(grant) {
				grant, writable = real, list.writable
			} else if pathWithin(path, g) && len(g) > len(grant) {
				grant, writable = g, list.writable
			}
		}
	}
	if grant == "" && pathWithin(path, "/usr") {
		return "/usr", false
	}
	return grant, writable
}

// grantDir is what to grant for path: a script's directory (python imports
// its siblings), a node file's package (node resolves node_modules upward
// from it), a directory itself, else the file's directory.
func (f *Facts) grantDir(path string, found stderrFinding) string {
	fsys := f.fs()
	node := found.pattern.node || (len(f.Command) > 0 && filepath.Base(f.Command[0]) == "node")
	if node {
		if i := strings.Index(path, "/node_modules/"); i > 0 {
			return path[:i]
		}
		for dir := filepath.Dir(path); dir != "/" && dir != "."; dir = filepath.Dir(dir) {
			if _, err := fsys.Stat(filepath.Join(dir, "package.json")); err == nil {
				return dir
			}
		}
	}
	if fi, err := fsys.Stat(path); err == nil && fi.IsDir() {
		return path
	}
	return filepath.Dir(path)
}

// pathWithin reports whether clean absolute path is dir or lies beneath it.
func pathWithin(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}

// envCause explains a variable the server says it needs: only what the
// policy passes or sets reaches it, and a passed one only when mcpsandbox
// has it. Restarting cannot help either way.
func envCause(name string, f *Facts) (Diagnosis, bool) {
	passed := false
	for _, e := range f.Env {
		k, _, set := strings.Cut(e, "=")
		if k == name && set {
			return Diagnosis{}, false // the policy sets it: the server refused its value
		}
		passed = passed || k == name
	}
	d := Diagnosis{Kind: EnvMissing, Path: name, Setting: "Env", env: envUnset}
	switch {
	case f.hostHas(name) && !passed:
		d.env = envNotPassed
	case passed:
		d.env = envNotHere
	}
	return d, true
}
