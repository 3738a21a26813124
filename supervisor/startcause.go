package supervisor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// diagnose reads a failed start's stderr lines against the host's file
// system (the supervisor runs outside the sandbox) and says, naming the
// setting that fixes it, what of the confinement kept the server from
// starting; "" when nothing did, as far as it can tell.
func (r *relay) diagnose(lines []string) string {
	for _, f := range findCauses(lines) {
		if msg := r.causeOf(f); msg != "" {
			return msg
		}
	}
	return ""
}

func (r *relay) causeOf(f stderrFinding) string {
	if f.pattern.kind == causeEnv {
		return r.envCause(f.path)
	}
	if f.pattern.kind == causeOffline {
		if r.pol.Net == policy.NetHost {
			return ""
		}
		return fmt.Sprintf("the server needed the network (%s failed) but the sandbox has none (%s %s): fetch what it needs once with `mcpsandbox prepare -- %s`, or give it the network with %s %s",
			f.path, r.setting("Net"), r.pol.Net, strings.Join(r.pol.Command, " "), r.setting("Net"), policy.NetHost)
	}
	p := filepath.Clean(f.path)
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if f.pattern.kind != causeReadOnly {
			return "" // not on the host either: a file really missing
		}
		real = p // a file being created
	}
	switch f.pattern.kind {
	case causeMissing, causeDenied:
		if r.visible(real) {
			if f.pattern.kind == causeDenied {
				return r.deniedCause(p, real)
			}
			return ""
		}
		what := "it exists on the host but is not granted to the server"
		if real != p && r.visible(p) {
			what = "it is a symbolic link to " + real + ", which is not granted to the server"
		}
		return fmt.Sprintf("the server could not open %s: %s; grant it with %s %s%s",
			p, what, r.setting("ReadOnly"), r.grantDir(real, f), r.fileKeyHint("ReadOnly"))
	case causeReadOnly:
		g, writable := r.grantOf(real)
		if writable {
			return ""
		}
		where := "it is not in a writable grant"
		if g != "" {
			where = "it lies in " + g + ", granted read-only (" + r.setting("ReadOnly") + ")"
		}
		fix := fmt.Sprintf("grant a writable directory with %s DIR%s and have the server write there", r.setting("ReadWrite"), r.fileKeyHint("ReadWrite"))
		if env, file := knownStateEnv(real); env != "" {
			fix += fmt.Sprintf(" (this server takes it from %s: %s %s=DIR/%s)", env, r.setting("Env"), env, file)
		} else {
			fix += fmt.Sprintf(" (servers commonly take the path from an environment variable: %s NAME=DIR/FILE)", r.setting("Env"))
		}
		return fmt.Sprintf("the server could not write %s: %s; %s", p, where, fix)
	}
	return ""
}

// deniedCause explains a permission error on a granted path: the server
// runs as a fresh unprivileged user (when mcpsandbox is root and no --user
// is given), so the host's permissions for others apply.
func (r *relay) deniedCause(p, real string) string {
	if os.Geteuid() != 0 || r.pol.User != "" {
		return ""
	}
	for dir := "/"; ; {
		fi, err := os.Stat(dir)
		if err != nil {
			return ""
		}
		final := dir == real
		need := os.FileMode(0o001) // others may pass through
		if final {
			need = 0o004 // others may read
		}
		if fi.Mode().Perm()&need == 0 {
			return fmt.Sprintf("the server could not open %s: it is granted, but %s (mode %#o) keeps the server's unprivileged user out; let others in (chmod o+%s %s) or run the server as its owner with %s NAME",
				p, dir, fi.Mode().Perm(), map[bool]string{true: "r", false: "x"}[final], dir, r.setting("User"))
		}
		if final {
			return ""
		}
		rest := strings.TrimPrefix(strings.TrimPrefix(real, dir), "/")
		next, _, _ := strings.Cut(rest, "/")
		dir = filepath.Join(dir, next)
	}
}

// visible reports whether the sandbox shows the host's path: it is in /usr
// or in a grant.
func (r *relay) visible(path string) bool {
	if pathWithin(path, "/usr") {
		return true
	}
	g, _ := r.grantOf(path)
	return g != ""
}

// grantOf returns the innermost grant holding path, and whether it is
// writable; "" when none does.
func (r *relay) grantOf(path string) (grant string, writable bool) {
	for _, list := range []struct {
		paths    []string
		writable bool
	}{{r.pol.ReadOnly, false}, {r.pol.ReadWrite, true}} {
		for _, g := range list.paths {
			g = filepath.Clean(g)
			if real, err := filepath.EvalSymlinks(g); err == nil && pathWithin(path, real) && len(real) > len(grant) {
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
func (r *relay) grantDir(path string, f stderrFinding) string {
	node := f.pattern.node || (len(r.pol.Command) > 0 && filepath.Base(r.pol.Command[0]) == "node")
	if node {
		if i := strings.Index(path, "/node_modules/"); i > 0 {
			return path[:i]
		}
		for dir := filepath.Dir(path); dir != "/" && dir != "."; dir = filepath.Dir(dir) {
			if _, err := os.Stat(filepath.Join(dir, "package.json")); err == nil {
				return dir
			}
		}
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return path
	}
	return filepath.Dir(path)
}

// fileKeyHint names the policy-file key beside a flag, unless the setting
// is already named as the key.
func (r *relay) fileKeyHint(field string) string {
	k := policy.KeyOf(field)
	if r.setting(field) == k {
		return ""
	}
	return " (or " + k + " in a policy file)"
}

// knownStateEnv names, for servers known to keep their state beside their
// code, the environment variable that moves it, and the file's usual name.
func knownStateEnv(path string) (env, file string) {
	for _, k := range []struct{ pkg, env, file string }{
		{"/@modelcontextprotocol/server-memory/", "MEMORY_FILE_PATH", "memory.jsonl"},
	} {
		if strings.Contains(path, k.pkg) {
			return k.env, k.file
		}
	}
	return "", ""
}

// pathWithin reports whether clean absolute path is dir or lies beneath it.
func pathWithin(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}

// envCause explains a variable the server says it needs: only what the
// policy passes or sets reaches it, and a passed one only when mcpsandbox
// has it. Restarting cannot help either way.
func (r *relay) envCause(name string) string {
	passed := false
	for _, e := range r.pol.Env {
		k, _, set := strings.Cut(e, "=")
		if k == name && set {
			return "" // the policy sets it: the server refused its value
		}
		passed = passed || k == name
	}
	if _, here := os.LookupEnv(name); here && !passed {
		return fmt.Sprintf("the server needs the environment variable %s, which mcpsandbox has but does not pass on: pass it with %s %s", name, r.setting("Env"), name)
	}
	if passed {
		return fmt.Sprintf("the server needs the environment variable %s, which the policy passes on but mcpsandbox's own environment lacks: set it where the host starts mcpsandbox (its \"env\" for this server)", name)
	}
	return fmt.Sprintf("the server needs the environment variable %s, which is not set: set it where the host starts mcpsandbox (its \"env\" for this server) and pass it with %s %s", name, r.setting("Env"), name)
}
