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
	"github.com/mcpsandbox/mcpsandbox/internal/pathrule"
	"github.com/mcpsandbox/mcpsandbox/sandbox/internal/initstage"
)

// Fixed places inside every sandbox; the init stage's are init.h's.
const (
	sandboxHome     = initstage.Home
	sandboxHostname = initstage.Hostname
	sandboxPath     = pathrule.ServerPATH
	sandboxLang     = "C.UTF-8"
)

// initConfig is what the supervisor resolves for one sandbox: the init
// stage's configuration and what its /etc files and identity are made from.
type initConfig struct {
	initstage.Config
	UserName string  // the server's name in the synthesized /etc/passwd
	Net      Network // its mode; the init stage sees only HostNetNS
	// With NetEgress: what is captured, checked (capture.go), and who
	// serves it; the init stage sees only Egress's socket counts.
	capture CaptureSpec
	egress  func(Listeners) error
	// With NetNone and Spec.Resolver: egress serves the DNS listeners
	// alone, and resolv.conf and seccomp let the server ask them.
	resolver bool
	// Where the search for sockets in the grants stopped ("" it did not):
	// Config.MaskedSockets holds what it found.
	SocketSearchCut string
}

// rootMount is one part of every sandbox's root that the init stage
// builds itself (init_root.c, in this order), whatever the configuration
// grants: what Describe lists, and what a grant, a tmpfs or the state
// directory may not lie within.
type rootMount struct {
	path     string
	writable bool
	scratch  bool // a private tmpfs of TmpSize (noexec with NoExecTmp but /dev/shm, always)
	what     string
	noGrant  bool // a grant would undo the masking of /proc or the minimal /dev
	noTmpfs  bool // nor may a tmpfs or the state directory lie within it
}

var rootMounts = []rootMount{
	{path: "/", what: "read-only tmpfs: a minimal /etc, nothing else of the host but these mounts"},
	{path: "/usr", what: "the host's, read-only (and /bin, /lib... as the host has them)"},
	{path: "/dev", what: "null, zero, full, random, urandom, read-only", noGrant: true, noTmpfs: true},
	{path: "/proc", writable: true, what: "its own processes; kcore, keys... masked; the host's cmdline, interrupts, diskstats, loadavg, pressure shown empty or zero, a boot id of its own; sys read-only", noGrant: true, noTmpfs: true},
	{path: "/dev/shm", writable: true, scratch: true, what: "private tmpfs"},
	{path: "/tmp", writable: true, scratch: true, what: "private tmpfs"},
	{path: sandboxHome, writable: true, scratch: true, what: "private tmpfs"},
	{path: "/sys", what: "its own cgroup at /sys/fs/cgroup only, read-only", noTmpfs: true},
}

// reservedPaths are where no grant may lie (rootMount.noGrant).
func reservedPaths() []string {
	var paths []string
	for _, m := range rootMounts {
		if m.noGrant {
			paths = append(paths, m.path)
		}
	}
	return paths
}

// builtPaths are where no tmpfs or state directory may lie
// (rootMount.noTmpfs).
func builtPaths() []string {
	var paths []string
	for _, m := range rootMounts {
		if m.noTmpfs {
			paths = append(paths, m.path)
		}
	}
	return paths
}

// resolveBinds checks the user's paths and orders them parents first, so a
// nested bind lands on top of its parent.
func resolveBinds(ro, rw []string) ([]initstage.Bind, error) {
	seen := map[string]initstage.Bind{}
	add := func(p string, writable bool) error {
		b := initstage.Bind{Path: p, Writable: writable}
		if !filepath.IsAbs(p) {
			return &field.Error{Field: b.Field(), Value: p, Problem: "the path must be absolute"}
		}
		clean := filepath.Clean(p)
		if clean == "/" {
			return &field.Error{Field: b.Field(), Value: "/", Problem: "binding the whole host root defeats the sandbox", Fix: "grant the directories the server needs"}
		}
		for _, r := range reservedPaths() {
			if pathrule.Within(clean, r) {
				return &field.Error{Field: b.Field(), Value: p, Problem: r + " is built by the sandbox and cannot be bound"}
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
	binds := make([]initstage.Bind, 0, len(seen))
	for _, b := range seen {
		binds = append(binds, b)
	}
	sortBinds(binds)
	return binds, nil
}

// sortBinds orders binds parents first.
func sortBinds(binds []initstage.Bind) {
	sort.Slice(binds, func(i, j int) bool {
		di, dj := strings.Count(binds[i].Path, "/"), strings.Count(binds[j].Path, "/")
		if di != dj {
			return di < dj
		}
		return binds[i].Path < binds[j].Path
	})
}

// resolveExecutable looks Args[0] up in the host's PATH and returns the
// path found and its real path, which is where the sandbox shows it.
func resolveExecutable(arg0 string) (found, real string, err error) {
	p, err := exec.LookPath(arg0)
	if err != nil {
		return "", "", fmt.Errorf("server command %q: %w", arg0, err)
	}
	if p, err = filepath.Abs(p); err != nil {
		return "", "", fmt.Errorf("server command %q: %w", arg0, err)
	}
	real, err = filepath.EvalSymlinks(p)
	if err != nil {
		return "", "", fmt.Errorf("server command %q: %w", arg0, err)
	}
	return p, real, nil
}

// exeVisible reports whether the executable is already inside the sandbox
// through /usr or a user bind.
func exeVisible(exe string, binds []initstage.Bind) bool {
	if pathrule.Within(exe, "/usr") {
		return true
	}
	for _, b := range binds {
		if pathrule.Within(exe, b.Path) {
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
	found, exe, err := resolveExecutable(spec.Args[0])
	if err != nil {
		return nil, err
	}
	cfg, err := layoutConfig(spec)
	if err != nil {
		return nil, err
	}
	cfg.Exe, cfg.ExeBind = exe, !exeVisible(exe, cfg.Binds)
	if cfg.Pins, err = programPins(programFiles(spec, found, cfg.Dir), cfg.Binds); err != nil {
		return nil, err
	}
	return cfg, nil
}

// layoutConfig is newInitConfig but for the executable: the root's
// grants, tmpfs, environment, working directory and limits, as Start
// builds them and Describe shows them.
func layoutConfig(spec Spec) (*initConfig, error) {
	binds, err := resolveBinds(spec.ReadOnly, spec.ReadWrite)
	if err != nil {
		return nil, err
	}
	if spec.StateDir != "" {
		state, err := stateDirBind(spec.StateDir, binds)
		if err != nil {
			return nil, err
		}
		binds = append(binds, state)
		sortBinds(binds)
	}
	tmpfs, err := resolveTmpfs(spec.Tmpfs, binds)
	if err != nil {
		return nil, err
	}
	if err := checkSetIDInGrants(binds); err != nil {
		return nil, err
	}
	sockets := findGrantSockets(binds)
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
	// The defaults are the policy's; a zero here is a caller's mistake,
	// not a request for a default.
	if spec.TmpSize <= 0 {
		return nil, &field.Error{Field: "TmpSize", Value: strconv.FormatInt(spec.TmpSize, 10), Problem: "must be positive"}
	}
	if spec.NoFile == 0 {
		return nil, &field.Error{Field: "NoFile", Value: "0", Problem: "must be positive"}
	}
	net, ok := spec.Net.mode()
	if !ok {
		return nil, &field.Error{Field: "Net", Value: spec.Net.String(), Problem: "is not a network this sandbox knows", Fix: "use NetNone, NetHost or NetEgress"}
	}
	egress, capture, err := captureSockets(spec)
	if err != nil {
		return nil, err
	}
	if spec.FileSize < 0 {
		return nil, &field.Error{Field: "FileSize", Value: strconv.FormatInt(spec.FileSize, 10), Problem: "must not be negative", Fix: "0 means no limit"}
	}
	return &initConfig{Config: initstage.Config{
		Args:    append([]string(nil), spec.Args...),
		Env:     env,
		Dir:     filepath.Clean(dir),
		Binds:   binds,
		TmpSize: spec.TmpSize,
		Tmpfs:   tmpfs,
		NoFile:  spec.NoFile,

		HostNetNS:     net.hostNetNS,
		FileSize:      uint64(spec.FileSize),
		NoExecTmp:     spec.NoExecTmp,
		Egress:        egress,
		MaskedSockets: sockets.Sockets,
	}, Net: spec.Net, capture: capture, egress: serveOf(spec), resolver: spec.Resolver != nil, SocketSearchCut: sockets.Cut}, nil
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
