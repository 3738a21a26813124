package sandbox

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// The probe is this test binary run as a confined server (TestMain starts it
// when sbxProbeEnv is set): it reports, from inside, what a server can see and
// do. The binary lives in go test's private build directory, so running it
// also exercises making the executable visible.
const (
	sbxProbeEnv  = "MCPSANDBOX_SBX_PROBE"
	sbxExistsEnv = "MCPSANDBOX_SBX_EXISTS" // colon-separated paths to stat
	sbxWriteEnv  = "MCPSANDBOX_SBX_WRITE"  // colon-separated dirs to try writing in
	sbxDialEnv   = "MCPSANDBOX_SBX_DIAL"   // host addresses to try connecting to
	sbxReadEnv   = "MCPSANDBOX_SBX_READ"   // files to read, directories to list
	sbxAwaitEnv  = "MCPSANDBOX_SBX_AWAIT"  // read a line on stdin before dialling
)

type sbxFacts struct {
	FDs        map[int]string // open descriptors when the probe started → what they are
	UID, EUID  int
	GID, EGID  int
	Groups     []int
	Hostname   string
	Interfaces []string
	LoUp       bool
	LoErr      string
	Dial       map[string]string // address → error ("" = connected)
	Pids       []int
	Pid        int
	Status     map[string]string // CapEff, CapBnd, NoNewPrivs, Seccomp, ...
	Env        []string
	Exists     map[string]bool
	Write      map[string]string // dir → error ("" = writable)
	Read       map[string]string // path → content, names for a directory, or "error: ..."
	TmpBytes   uint64
	HomeBytes  uint64
	Mounts     map[string]string // mount point → mount options
	ExeDir     []string
	Cwd        string
	NoFileCur  uint64
	CoreMax    uint64
	PasswdName string
	Cgroup     string // /proc/self/cgroup
}

// runSbxProbe gathers the facts and prints them as JSON on stdout.
func runSbxProbe() int {
	var f sbxFacts
	f.FDs = sbxOpenFDs() // first, before the runtime opens anything
	f.UID, f.EUID, f.GID, f.EGID = os.Getuid(), os.Geteuid(), os.Getgid(), os.Getegid()
	f.Groups, _ = os.Getgroups()
	f.Hostname, _ = os.Hostname()
	f.Interfaces = sbxInterfaces()
	f.LoUp, f.LoErr = sbxLoUp()
	f.Dial = map[string]string{}
	if os.Getenv(sbxAwaitEnv) != "" {
		bufio.NewReader(os.Stdin).ReadString('\n')
	}
	for _, addr := range sbxList(os.Getenv(sbxDialEnv)) {
		network := "tcp"
		if strings.HasPrefix(addr, "@") || strings.HasPrefix(addr, "/") {
			network = "unix"
		}
		c, err := net.Dial(network, addr)
		if err != nil {
			f.Dial[addr] = err.Error()
		} else {
			f.Dial[addr] = ""
			c.Close()
		}
	}
	f.Pid = os.Getpid()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			f.Pids = append(f.Pids, pid)
		}
	}
	f.Status = map[string]string{}
	if data, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if ok {
				f.Status[k] = strings.TrimSpace(v)
			}
		}
	}
	f.Env = os.Environ()
	f.Exists = map[string]bool{}
	for _, p := range sbxList(os.Getenv(sbxExistsEnv)) {
		_, err := os.Lstat(p)
		f.Exists[p] = err == nil
	}
	f.Write = map[string]string{}
	for _, dir := range sbxList(os.Getenv(sbxWriteEnv)) {
		name := filepath.Join(dir, fmt.Sprintf(".probe-%d", os.Getpid()))
		if err := os.WriteFile(name, []byte("probe"), 0o644); err != nil {
			f.Write[dir] = err.Error()
		} else {
			f.Write[dir] = ""
			os.Remove(name)
		}
	}
	f.Read = map[string]string{}
	for _, p := range sbxList(os.Getenv(sbxReadEnv)) {
		f.Read[p] = sbxRead(p)
	}
	f.TmpBytes = sbxFSBytes("/tmp")
	f.HomeBytes = sbxFSBytes(os.Getenv("HOME"))
	f.Mounts = sbxMountOptions()
	if exe, err := os.Executable(); err == nil {
		des, _ := os.ReadDir(filepath.Dir(exe))
		for _, d := range des {
			f.ExeDir = append(f.ExeDir, d.Name())
		}
	}
	f.Cwd, _ = os.Getwd()
	var rl unix.Rlimit
	unix.Getrlimit(unix.RLIMIT_NOFILE, &rl)
	f.NoFileCur = rl.Cur
	unix.Getrlimit(unix.RLIMIT_CORE, &rl)
	f.CoreMax = rl.Max
	if data, err := os.ReadFile("/etc/passwd"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			fields := strings.Split(line, ":")
			if len(fields) > 2 && fields[2] == strconv.Itoa(f.UID) {
				f.PasswdName = fields[0]
			}
		}
	}
	if data, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		f.Cgroup = string(data)
	}
	if err := json.NewEncoder(os.Stdout).Encode(f); err != nil {
		return 1
	}
	return 0
}

// sbxRead is a file's content or a directory's names, one a line.
func sbxRead(p string) string {
	if des, err := os.ReadDir(p); err == nil {
		var names []string
		for _, d := range des {
			names = append(names, d.Name())
		}
		return strings.Join(names, "\n")
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return "error: " + err.Error()
	}
	return string(data)
}

func sbxList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// sbxOpenFDs lists /proc/self/fd with raw syscalls, leaving out the
// descriptor used for listing and those marked close-on-exec: a descriptor
// that survived the exec cannot carry that flag, so those were opened by
// this process's own runtime (Go ≥1.25 keeps its cgroup's cpu.max open).
func sbxOpenFDs() map[int]string {
	dir, err := unix.Open("/proc/self/fd", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return map[int]string{-1: err.Error()}
	}
	defer unix.Close(dir)
	buf := make([]byte, 4096)
	fds := map[int]string{}
	for {
		n, err := unix.Getdents(dir, buf)
		if err != nil || n <= 0 {
			break
		}
		var names []string
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
		for _, name := range names {
			fd, err := strconv.Atoi(name)
			if err != nil || fd == dir {
				continue
			}
			if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC != 0 {
				continue
			}
			fds[fd], _ = os.Readlink("/proc/self/fd/" + name)
		}
	}
	return fds
}

func sbxInterfaces() []string {
	file, err := os.Open("/proc/net/dev")
	if err != nil {
		return []string{"error: " + err.Error()}
	}
	defer file.Close()
	var names []string
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		if name, _, ok := strings.Cut(sc.Text(), ":"); ok {
			names = append(names, strings.TrimSpace(name))
		}
	}
	return names
}

// sbxLoUp asks the kernel for lo's flags on an AF_UNIX socket, which seccomp
// allows even without network.
func sbxLoUp() (bool, string) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return false, err.Error()
	}
	defer unix.Close(fd)
	ifr, _ := unix.NewIfreq("lo")
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return false, err.Error()
	}
	return ifr.Uint16()&unix.IFF_UP != 0, ""
}

func sbxFSBytes(path string) uint64 {
	var st unix.Statfs_t
	if unix.Statfs(path, &st) != nil {
		return 0
	}
	return st.Blocks * uint64(st.Bsize)
}

func sbxMountOptions() map[string]string {
	m := map[string]string{}
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return m
	}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 5 {
			m[fields[4]] = fields[5]
		}
	}
	return m
}

// sbxProbe runs the probe confined under spec and decodes its facts.
func sbxProbe(t *testing.T, spec Spec, env ...string) sbxFacts {
	t.Helper()
	spec.Args = []string{os.Args[0]}
	spec.Env = append(append([]string{sbxProbeEnv + "=1"}, spec.Env...), env...)
	out, errOut, ex := sbxRun(t, spec)
	if ex.Failed() {
		t.Fatalf("probe: %v\nstderr:\n%s", ex, errOut)
	}
	var f sbxFacts
	if err := json.Unmarshal([]byte(out), &f); err != nil {
		t.Fatalf("probe output: %v\n%s\nstderr:\n%s", err, out, errOut)
	}
	return f
}
