package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/pathrule"
	"github.com/mcpsandbox/mcpsandbox/sandbox/cgroups"
	"github.com/mcpsandbox/mcpsandbox/sandbox/seccomp"
)

// Description is what Start would make of a Spec, for a person to read
// (policy explain): the server's root mount by mount, its environment,
// user, network, seccomp filter, Landlock and limits. Describe builds it
// from the values and checks Start uses, so that what is shown is what
// runs; it starts, leases and changes nothing.
type Description struct {
	Unconfined bool   // none of the rest applies: the server runs as the caller
	Exe        string // the program as the sandbox finds it on the PATH, links resolved ("" not found)

	Mounts       []Mount  // what the server's root holds, in the order it is built
	Home         string   // HOME inside
	WorkDir      string   // the working directory inside
	WorkDirEmpty bool     // no grant holds WorkDir: it is made, empty
	Env          []string // the server's whole environment, NAME=VALUE (values included: hide what is secret)
	Path         string   // the PATH of Env

	// Where the search for unix sockets in the grants stopped ("" it
	// searched them all): sockets past it are not masked.
	SocketSearchCut string

	User     string // who the server runs as
	Network  string
	Seccomp  []string // the filter, and whether this host enforces it
	Landlock []string // what Landlock adds on this kernel, and what stays open
	Limits   []Limit
	Problems []error // what Start would refuse, as it would say it (field errors name Spec's fields)
}

// Mount is one mount of the server's root.
type Mount struct {
	Path     string
	Writable bool
	Kind     MountKind
	What     string // for System mounts and tmpfs: what is there; for a grant: whose files it shows as the server's, if idmapped
}

// MountKind tells the sandbox's own mounts from what a Spec grants.
type MountKind int

const (
	System  MountKind = iota // built in every sandbox (rootMounts)
	Grant                    // Spec.ReadOnly or Spec.ReadWrite
	State                    // Spec.StateDir
	Program                  // the executable, which nothing else shows
	Tmpfs                    // Spec.Tmpfs
	Masked                   // a unix socket found in a grant, covered so that connecting fails
	Pinned                   // a part of the program in a writable grant, kept as it is (program.go)
)

// Limit is one bound on the server.
type Limit struct {
	Field string // the Spec field that sets it
	Value string // "unlimited" for 0 where 0 means none
	How   string
}

// Describe says what Start would do with spec.
func Describe(spec Spec) Description {
	var d Description
	problem := func(err error) {
		if err != nil {
			d.Problems = append(d.Problems, err)
		}
	}
	if len(spec.Args) == 0 {
		problem(fmt.Errorf("sandbox: empty command"))
		return d
	}
	if spec.Unconfined {
		d.Unconfined = true
		exe, err := exec.LookPath(spec.Args[0])
		problem(err)
		d.Exe, d.Env = exe, append(os.Environ(), spec.Env...)
		return d
	}
	found, exe, err := resolveExecutable(spec.Args[0])
	problem(err)
	d.Exe = exe
	cfg, err := layoutConfig(spec)
	problem(err)
	if cfg != nil {
		problem(grantsUsable(spec, cfg))
	}
	if cfg == nil {
		// The grants cannot be laid out: show the sandbox's own part.
		cfg = &initConfig{}
		cfg.Dir, cfg.TmpSize, cfg.NoExecTmp = sandboxHome, spec.TmpSize, spec.NoExecTmp
		cfg.Env, _ = serverEnv(nil)
	}
	if exe != "" {
		cfg.Exe, cfg.ExeBind = exe, !exeVisible(exe, cfg.Binds)
		cfg.Pins, err = programPins(programFiles(spec, found, cfg.Dir), cfg.Binds)
		problem(err)
	}
	d.Mounts = describeMounts(cfg)
	describeGrantOwners(spec, cfg, &d)
	d.SocketSearchCut = cfg.SocketSearchCut
	d.Home, d.WorkDir, d.Env = sandboxHome, cfg.Dir, cfg.Env
	d.WorkDirEmpty = !workDirGranted(cfg)
	for _, kv := range d.Env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			d.Path = v
		}
	}
	d.User, err = describeUser(spec)
	problem(err)
	if m, ok := spec.Net.mode(); ok {
		d.Network = m.name + ": " + m.what
		if spec.Net == NetEgress {
			capture := spec.Capture
			if _, checked, err := captureSockets(spec); err == nil {
				capture = checked
			}
			d.Network += ": " + describeCapture(capture)
		}
		if spec.Net == NetNone && spec.Resolver != nil {
			d.Network += "; DNS to the supervisor's resolver at 127.0.0.1:53, which answers every name NXDOMAIN and notes it (UDP sockets only)"
		}
	} else {
		d.Network = spec.Net.String()
	}
	d.Seccomp, err = describeSeccomp(spec)
	problem(err)
	d.Landlock, err = describeLandlock(cfg, spec.Net)
	problem(err)
	d.Limits = describeLimits(spec)
	return d
}

// describeMounts lists cfg's root as root_finish builds it: the
// sandbox's own mounts, the tmpfs, the grants parents first, the
// program, /sys last.
func describeMounts(cfg *initConfig) []Mount {
	var out []Mount
	size := sizeString(cfg.TmpSize)
	system := func(m rootMount) {
		what := m.what
		if m.scratch {
			what += ", " + size
			if cfg.NoExecTmp || m.path == "/dev/shm" {
				what += ", noexec"
			}
		}
		out = append(out, Mount{Path: m.path, Writable: m.writable, Kind: System, What: what})
	}
	for _, m := range rootMounts {
		if m.path != "/sys" {
			system(m)
		}
	}
	for _, t := range cfg.Tmpfs {
		what := "private tmpfs, empty, " + size
		if cfg.NoExecTmp {
			what += ", noexec"
		}
		out = append(out, Mount{Path: t, Writable: true, Kind: Tmpfs, What: what})
	}
	for _, b := range cfg.Binds {
		kind := Grant
		if b.State {
			kind = State
		}
		out = append(out, Mount{Path: b.Path, Writable: b.Writable, Kind: kind})
	}
	if cfg.ExeBind {
		out = append(out, Mount{Path: cfg.Exe, Kind: Program})
	}
	for _, sock := range cfg.MaskedSockets {
		out = append(out, Mount{Path: sock, Kind: Masked, What: "a unix socket in a grant, found at the start: covered by an empty read-only file, connecting is refused"})
	}
	for _, pin := range cfg.Pins {
		if fi, err := os.Lstat(pin); err == nil && fi.IsDir() {
			out = append(out, Mount{Path: pin, Writable: true, Kind: Pinned, What: "on the way to the program: cannot be moved aside or removed"})
		} else {
			out = append(out, Mount{Path: pin, Kind: Pinned, What: "the program, in a writable grant: read-only, cannot be replaced"})
		}
	}
	for _, m := range rootMounts {
		if m.path == "/sys" {
			system(m)
		}
	}
	return out
}

// workDirGranted: a grant holds the working directory (make_workdir's
// rule); else it is made empty in the root.
func workDirGranted(cfg *initConfig) bool {
	for _, b := range cfg.Binds {
		if pathrule.Within(cfg.Dir, b.Path) {
			return true
		}
	}
	return false
}

// describeUser is chooseUser's answer without leasing an id.
func describeUser(spec Spec) (string, error) {
	if os.Geteuid() != 0 {
		u, err := unprivilegedUser(spec)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("uid %d (yours), in a user namespace of its own", u.uid), nil
	}
	if spec.User != "" {
		u, err := namedUser(spec.User)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s (uid %d)", u.name, u.uid), nil
	}
	if spec.StateDir != "" {
		return fmt.Sprintf("a dynamic uid of its own (%d and up), the owner of its state directory", DynamicIDFirst), nil
	}
	return fmt.Sprintf("a dynamic uid of its own (%d and up), never root", DynamicIDFirst), nil
}

// describeSeccomp compiles the filter as Start does.
func describeSeccomp(spec Spec) ([]string, error) {
	what := "the Docker/OCI profile " + spec.Seccomp
	if spec.Seccomp == "default" {
		what = "default: Docker's allowlist less the calls that need capabilities"
	}
	lines := []string{what}
	prog, err := seccomp.Program(spec.Seccomp, socketFamilies(spec.Net, spec.Resolver != nil), spec.SeccompLog)
	if err != nil {
		return lines, fmt.Errorf("sandbox: seccomp cannot be enforced: %w", err)
	}
	lines[0] += fmt.Sprintf(" (%d BPF instructions)", len(prog)/8)
	if ok, version, err := seccomp.Info(); ok {
		lines = append(lines, "enforced here (libseccomp "+version+")")
	} else {
		lines = append(lines, "not enforceable here: "+err.Error())
	}
	if spec.SeccompLog {
		lines = append(lines, "refusals are logged and allowed")
	}
	return lines, nil
}

func describeLimits(spec Spec) []Limit {
	sized := func(n int64) string {
		if n == 0 {
			return "unlimited"
		}
		return sizeString(n)
	}
	cpu := "unlimited"
	if spec.CPU != 0 {
		cpu = strconv.FormatFloat(spec.CPU, 'f', -1, 64)
	}
	pids := "unlimited"
	if spec.Pids != 0 {
		pids = strconv.FormatInt(spec.Pids, 10)
	}
	return []Limit{
		{"Memory", sized(spec.Memory), "cgroup memory limit, swap off"},
		{"Pids", pids, "cgroup limit on processes and threads"},
		{"CPU", cpu, "cgroup CPU limit, in cores"},
		{"CPUWeight", strconv.FormatUint(cpuWeight(spec), 10), fmt.Sprintf("cgroup cpu.weight (v1 cpu.shares %d): its share against the supervisor and the programs beside it when they want the processor too (theirs: 100); caps nothing", cgroups.WeightShares(cpuWeight(spec)))},
		{"NoFile", strconv.FormatUint(spec.NoFile, 10), "RLIMIT_NOFILE"},
		{"FileSize", sized(spec.FileSize), "RLIMIT_FSIZE"},
		{"TmpSize", sizeString(spec.TmpSize), "each of /tmp, /dev/shm, HOME and every tmpfs"},
	}
}

// sizeString writes n bytes as policy's sizes are written (1GiB, 64MiB).
func sizeString(n int64) string {
	for _, u := range []struct {
		size int64
		unit string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.unit
		}
	}
	return strconv.FormatInt(n, 10)
}
