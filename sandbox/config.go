package sandbox

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/sandbox/cgroups"
)

// Fixed places inside every sandbox.
const (
	sandboxHome     = "/sandbox" // the server's empty tmpfs HOME
	sandboxHostname = "mcpsandbox"
	sandboxPath     = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
	sandboxLang     = "C.UTF-8"
	defaultTmpSize  = 64 << 20
)

// initConfig is everything the init stage needs, resolved by the supervisor
// and sent over a pipe (never argv or env) in wire.go's encoding.
type initConfig struct {
	Args []string // argv; Args[0] as the user gave it
	Exe  string   // the executable's real path, the same inside and outside
	Env  []string // the complete environment of the server
	Dir  string   // working directory inside

	Binds   []bind // user binds, parents before children
	ExeBind bool   // Exe lies outside the visible paths: bind it read-only

	TmpSize int64
	NetHost bool
	NoFile  uint64

	UID, GID uint32 // the server's ids as seen inside the sandbox
	UserName string // its name in the synthesized /etc/passwd
	UserNS   bool   // the sandbox has its own user namespace (unprivileged supervisor)

	Seccomp []byte // compiled BPF, loaded right before exec; empty only in tests

	// Sent apart (cgroupMessage) once the cgroup exists: the init stage
	// builds the rest of the root meanwhile.
	CgroupView []cgroups.ViewDir // the server's own cgroup, shown read-only at cgroups.Mount
	CgroupJoin []string          // cgroup v1 tasks files the forking process joins by writing "0"
}

// bind is one --ro or --rw path.
type bind struct {
	Path     string
	Writable bool
	IDMap    *idMap // show this owner as the server (root supervisor only)
}

func (b bind) field() string {
	if b.Writable {
		return "ReadWrite"
	}
	return "ReadOnly"
}

// reservedPaths are built by the sandbox itself; binding over them would
// undo the masking of /proc or the minimal /dev.
var reservedPaths = []string{"/proc", "/dev"}

// resolveBinds checks the user's paths and orders them parents first, so a
// nested bind lands on top of its parent.
func resolveBinds(ro, rw []string) ([]bind, error) {
	seen := map[string]bind{}
	add := func(p string, writable bool) error {
		b := bind{Path: p, Writable: writable}
		if !filepath.IsAbs(p) {
			return &field.Error{Field: b.field(), Value: p, Problem: "the path must be absolute"}
		}
		clean := filepath.Clean(p)
		if clean == "/" {
			return &field.Error{Field: b.field(), Value: "/", Problem: "binding the whole host root defeats the sandbox", Fix: "grant the directories the server needs"}
		}
		for _, r := range reservedPaths {
			if within(clean, r) {
				return &field.Error{Field: b.field(), Value: p, Problem: r + " is built by the sandbox and cannot be bound"}
			}
		}
		if prev, ok := seen[clean]; ok && prev.Writable != writable {
			return &field.Error{Field: "ReadWrite", Problem: clean + " is given both as {ReadOnly} and {ReadWrite}", Fix: "keep one"}
		}
		b.Path = clean
		seen[clean] = b
		return nil
	}
	for _, p := range ro {
		if err := add(p, false); err != nil {
			return nil, err
		}
	}
	for _, p := range rw {
		if err := add(p, true); err != nil {
			return nil, err
		}
	}
	binds := make([]bind, 0, len(seen))
	for _, b := range seen {
		binds = append(binds, b)
	}
	sort.Slice(binds, func(i, j int) bool {
		di, dj := strings.Count(binds[i].Path, "/"), strings.Count(binds[j].Path, "/")
		if di != dj {
			return di < dj
		}
		return binds[i].Path < binds[j].Path
	})
	return binds, nil
}

// within reports whether path is dir or lies beneath it.
func within(path, dir string) bool {
	if dir == "/" {
		return true
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// resolveExecutable looks Args[0] up in the host's PATH and returns its real
// path, which is where the sandbox shows it.
func resolveExecutable(arg0 string) (string, error) {
	p, err := exec.LookPath(arg0)
	if err != nil {
		return "", fmt.Errorf("server command %q: %w", arg0, err)
	}
	if p, err = filepath.Abs(p); err != nil {
		return "", fmt.Errorf("server command %q: %w", arg0, err)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("server command %q: %w", arg0, err)
	}
	return real, nil
}

// exeVisible reports whether the executable is already inside the sandbox
// through /usr or a user bind.
func exeVisible(exe string, binds []bind) bool {
	if within(exe, "/usr") {
		return true
	}
	for _, b := range binds {
		if within(exe, b.Path) {
			return true
		}
	}
	return false
}

// serverEnv is the server's whole environment: a minimal PATH, HOME and LANG,
// overridden by what the policy declares.
func serverEnv(declared []string) ([]string, error) {
	env := []string{"PATH=" + sandboxPath, "HOME=" + sandboxHome, "LANG=" + sandboxLang}
	index := map[string]int{"PATH": 0, "HOME": 1, "LANG": 2}
	for _, kv := range declared {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("environment entry %q: the supervisor must pass NAME=VALUE", kv)
		}
		if i, dup := index[name]; dup {
			env[i] = kv
			continue
		}
		index[name] = len(env)
		env = append(env, kv)
	}
	return env, nil
}

// newInitConfig resolves spec into what the stages need, except the user and
// the seccomp program, which the caller fills in.
func newInitConfig(spec Spec) (*initConfig, error) {
	exe, err := resolveExecutable(spec.Args[0])
	if err != nil {
		return nil, err
	}
	binds, err := resolveBinds(spec.ReadOnly, spec.ReadWrite)
	if err != nil {
		return nil, err
	}
	env, err := serverEnv(spec.Env)
	if err != nil {
		return nil, err
	}
	dir := spec.Dir
	if dir == "" {
		dir = sandboxHome
	}
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("working directory %q must be absolute", dir)
	}
	tmp := spec.TmpSize
	if tmp <= 0 {
		tmp = defaultTmpSize
	}
	nofile := spec.NoFile
	if nofile == 0 {
		nofile = 1024
	}
	return &initConfig{
		Args:    append([]string(nil), spec.Args...),
		Exe:     exe,
		Env:     env,
		Dir:     filepath.Clean(dir),
		Binds:   binds,
		ExeBind: !exeVisible(exe, binds),
		TmpSize: tmp,
		NetHost: spec.NetHost,
		NoFile:  nofile,
	}, nil
}

// checkNoFile refuses a NOFILE limit a user namespace cannot grant.
func checkNoFile(cfg *initConfig) error {
	var cur syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &cur); err != nil {
		return fmt.Errorf("RLIMIT_NOFILE: %v", err)
	}
	if cfg.UserNS && cfg.NoFile > cur.Max {
		return &field.Error{Field: "NoFile", Value: strconv.FormatUint(cfg.NoFile, 10), Problem: "exceeds the hard limit " + strconv.FormatUint(cur.Max, 10) + " mcpsandbox runs with", Fix: "lower {NoFile} or raise the hard limit (ulimit -Hn)"}
	}
	return nil
}
