package diagnose

import (
	"path/filepath"
	"strings"
)

// A tool error's text is the server's to write: it may quote any path. So
// its diagnosis is decided from the policy alone, never from the host (no
// stat, no readlink: the answer is the same whether a file exists or not,
// and mcpsandbox's rights on the host are never lent to the server), and
// it names only paths the user's own configuration already holds: within
// a grant, or within a path the command line names (an argument, the
// working directory) that is not granted. It never names the places no
// policy should grant, so a server cannot have mcpsandbox recommend
// granting what the server chose.

// neverGranted are the places a hint never names: what the sandbox
// builds itself, the host's system directories and mcpsandbox's own state
// (every server's state directory when mcpsandbox runs as root);
// Facts.Own adds the user's own places of mcpsandbox.
var neverGranted = []string{
	"/proc", "/dev", "/sys",
	"/etc", "/boot", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/run", "/var/run",
	"/var/lib/mcpsandbox",
}

// ungrantable reports whether path lies in a place no hint names: the
// fixed ones, mcpsandbox's own, the server's private tmpfs (not the
// host's at all).
func (f *Facts) ungrantable(path string) bool {
	for _, list := range [][]string{neverGranted, f.Own, f.Tmpfs} {
		for _, dir := range list {
			if filepath.IsAbs(dir) && pathWithin(path, filepath.Clean(dir)) {
				return true
			}
		}
	}
	return false
}

// policyGrantOf is grantOf from the policy's words alone: the innermost
// grant that holds path as written, and whether it is writable.
func (f *Facts) policyGrantOf(path string) (grant string, writable bool) {
	for _, list := range []struct {
		paths    []string
		writable bool
	}{{f.ReadOnly, false}, {f.ReadWrite, true}} {
		for _, g := range list.paths {
			if g = filepath.Clean(g); filepath.IsAbs(g) && pathWithin(path, g) && len(g) > len(grant) {
				grant, writable = g, list.writable
			}
		}
	}
	return grant, writable
}

// namedRoot is the innermost path the command line names (an absolute
// argument, or one's value after '=', or the working directory) that
// holds path; "" when none does, or it is / or a place no hint names.
// The program is no such path: the sandbox shows it whatever is granted.
func (f *Facts) namedRoot(path string) string {
	named := []string{f.WorkDir}
	for i, a := range f.Command {
		if i == 0 {
			continue
		}
		if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(v, "/") {
			a = v
		}
		named = append(named, a)
	}
	root := ""
	for _, n := range named {
		if !filepath.IsAbs(n) {
			continue
		}
		if n = filepath.Clean(n); n != "/" && pathWithin(path, n) && len(n) > len(root) && !f.ungrantable(n) {
			root = n
		}
	}
	return root
}

// toolCause explains a path a tool error quotes, from the policy alone
// (see above): a write into a read-only grant, a granted path the host's
// permissions keep the server's own user from, a path under one the
// command names but the policy does not grant. Nothing else: not the
// network, not the environment (whether mcpsandbox has a variable is the
// host's to keep).
func toolCause(found stderrFinding, f *Facts) (Diagnosis, bool) {
	kind := found.pattern.kind
	if (kind != causeMissing && kind != causeDenied && kind != causeReadOnly) || !filepath.IsAbs(found.path) {
		return Diagnosis{}, false
	}
	p := filepath.Clean(found.path)
	if g, writable := f.policyGrantOf(p); g != "" {
		switch {
		case kind == causeReadOnly && !writable:
			d := Diagnosis{Kind: ReadOnlyGrant, Path: p, Setting: "ReadWrite", grant: g}
			d.stateEnv, d.stateFile = knownStateEnv(p)
			return d, true
		case kind == causeDenied && f.Root && f.User == "":
			return Diagnosis{Kind: Denied, Path: p, Setting: "User", grant: g}, true
		}
		return Diagnosis{}, false // granted as it needs: the server's own error
	}
	if f.ungrantable(p) {
		return Diagnosis{}, false
	}
	root := f.namedRoot(p)
	if root == "" {
		return Diagnosis{}, false
	}
	if kind == causeReadOnly {
		return Diagnosis{Kind: ReadOnlyGrant, Path: p, Setting: "ReadWrite", named: root}, true
	}
	return Diagnosis{Kind: NotGranted, Path: p, Setting: "ReadOnly", grantDir: root, named: root}, true
}
