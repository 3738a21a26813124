package cgroups

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	containerd "github.com/containerd/cgroups/v3"
	"github.com/mcpsandbox/mcpsandbox/sandbox/scope"
	"golang.org/x/sys/unix"
)

// Home says where this process creates its servers' cgroups on cgroup
// v2, and how it came to sit there.
type Home struct {
	Dir     string        // the cgroup server cgroups are created in
	Reason  string        // why the cgroup it was started in could not be used; "" if it could
	Scope   string        // the scope unit obtained from systemd; "" if none was needed
	Manager string        // which manager was asked
	Address string        // the D-Bus address it answered at
	Took    time.Duration // how long obtaining the scope took
	Err     error         // no usable cgroup: the diagnosis
}

var (
	homeOnce   sync.Once
	home       Home
	homeLogged sync.Once
)

// LogHome logs once how this process got its cgroup v2 home.
func LogHome(log *slog.Logger) {
	if containerd.Mode() != containerd.Unified {
		return
	}
	homeLogged.Do(func() {
		if home.Scope == "" {
			log.Debug("sandbox: server cgroups go beneath the cgroup mcpsandbox was started in", "cgroup", home.Dir)
			return
		}
		log.Info("sandbox: obtained a cgroup of its own from systemd", "scope", home.Scope, "manager", home.Manager,
			"address", home.Address, "took", home.Took.Round(time.Microsecond), "because", home.Reason)
	})
}

// scopeTimeout bounds the request to systemd; a manager under load (or a
// guest under emulation) answers in milliseconds to a few seconds.
const scopeTimeout = 30 * time.Second

// HomeV2 is v2Home for the cgroup v2 hierarchy at Mount; ok is false on a
// host without pure cgroup v2, where server cgroups need no home.
func HomeV2(name string) (h Home, ok bool) {
	if containerd.Mode() != containerd.Unified {
		return Home{}, false
	}
	return v2Home(Mount, name), true
}

// Controllers lists the controllers the home offers its servers' cgroups.
func (h Home) Controllers() []string { return readFields(filepath.Join(h.Dir, "cgroup.controllers")) }

// v2Home makes sure, once per process, that this process sits in a leaf of
// a cgroup v2 subtree it may manage: the cgroup it was started in when that
// is writable and holds none but its own processes, else a transient
// systemd scope with Delegate=yes. name labels the scope.
func v2Home(mountpoint, name string) Home {
	homeOnce.Do(func() { home = findV2Home(mountpoint, name) })
	return home
}

func findV2Home(mountpoint, name string) Home {
	own, err := ownV2Group()
	if err != nil {
		return Home{Err: err}
	}
	if path.Base(own) == SupervisorLeaf { // set up before (an exec'd mcpsandbox, a test)
		return Home{Dir: filepath.Join(mountpoint, path.Dir(own))}
	}
	dir := filepath.Join(mountpoint, own)
	reason := v2Unusable(dir)
	if reason == "" {
		if err := moveSelfToLeaf(dir); err != nil {
			return Home{Dir: dir, Err: err}
		}
		return Home{Dir: dir}
	}
	m := scope.ForThisProcess(os.Environ())
	h := Home{Reason: reason, Manager: m.String()}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), scopeTimeout)
	defer cancel()
	sc, err := scope.Start(ctx, m, scope.Request{
		Name:        name,
		Description: "mcpsandbox: confined MCP server " + name,
		PIDs:        []int{os.Getpid()},
	})
	if err != nil {
		h.Err = noHomeError(reason, m, err)
		return h
	}
	h.Scope, h.Address = sc.Unit, sc.Address
	h.Dir, h.Err = enterScope(mountpoint, sc)
	h.Took = time.Since(start)
	return h
}

// v2Unusable says why the cgroup at dir cannot hold this process's server
// cgroups, or "" when it can.
func v2Unusable(dir string) string {
	if !fileExists(filepath.Join(dir, "cgroup.type")) {
		return "" // the root cgroup: exempt from the no-internal-processes rule
	}
	for _, f := range []string{"", "cgroup.procs", "cgroup.subtree_control"} {
		if unix.Access(filepath.Join(dir, f), unix.W_OK) != nil {
			return fmt.Sprintf("cgroup %s is not writable by uid %d", dir, os.Geteuid())
		}
	}
	procs, err := readProcs(dir)
	if err != nil {
		return fmt.Sprintf("cannot read the processes of cgroup %s: %v", dir, err)
	}
	if _, others := splitOwnProcesses(procs); len(others) > 0 {
		return fmt.Sprintf("cgroup %s also holds processes of other programs (%s), and cgroup v2 lets only "+
			"cgroups without processes pass controllers on", dir, describePids(others))
	}
	// Only unit cgroups are systemd's; below a unit a cgroup is its delegate's.
	if os.Geteuid() == 0 && systemdBooted() && systemdUnitCgroup(dir) && !systemdDelegated(dir) {
		return fmt.Sprintf("cgroup %s is managed by systemd, which has not delegated it (no Delegate=yes)", dir)
	}
	return ""
}

// enterScope checks that systemd moved this process into the scope, and
// moves it on into the scope's leaf.
func enterScope(mountpoint string, sc scope.Scope) (string, error) {
	own, err := ownV2Group()
	if err != nil {
		return "", err
	}
	if path.Base(own) != sc.Unit {
		return "", &limitsError{
			Missing: fmt.Sprintf("systemd started the scope %s but this process is in %s", sc.Unit, own),
			Fix:     fixDelegate + "; " + fixDoctor,
		}
	}
	dir := filepath.Join(mountpoint, own)
	if reason := v2Unusable(dir); reason != "" {
		return "", &limitsError{Missing: "the scope systemd gave is not usable: " + reason, Fix: fixDelegate + "; " + fixDoctor}
	}
	return dir, moveSelfToLeaf(dir)
}

// noHomeError diagnoses the case where neither the cgroup mcpsandbox was
// started in nor a systemd scope can hold its servers' cgroups.
func noHomeError(reason string, m scope.Manager, err error) error {
	fix := fmt.Sprintf("start mcpsandbox as a systemd service with Delegate=yes, or under "+
		"`systemd-run %s--scope -p Delegate=yes mcpsandbox ...`", m.Systemctl())
	if !systemdBooted() {
		dir := Mount + "/mcpsandbox"
		fix = "start mcpsandbox in a cgroup v2 of its own that it may write (e.g. as root: `mkdir " + dir + " && " +
			"chown -R " + strconv.Itoa(os.Geteuid()) + " " + dir + "`, then move the shell that starts it: " +
			"`echo $$ > " + dir + "/cgroup.procs`), or " + fix
	}
	return &limitsError{
		Missing: reason + "; asking " + m.String() + " for a scope of its own failed",
		Fix:     fix + "; " + fixDoctor,
		Err:     err,
	}
}

// splitOwnProcesses parts pids into this process and its descendants, and
// the rest.
func splitOwnProcesses(pids []int) (mine, others []int) {
	self := os.Getpid()
	for _, p := range pids {
		if descendsFrom(p, self) {
			mine = append(mine, p)
		} else {
			others = append(others, p)
		}
	}
	return mine, others
}

// descendsFrom reports whether pid is ancestor or one of its descendants.
func descendsFrom(pid, ancestor int) bool {
	for depth := 0; pid > 1 && depth < 64; depth++ {
		if pid == ancestor {
			return true
		}
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return false
		}
		// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
		end := strings.LastIndexByte(string(stat), ')')
		if end < 0 {
			return false
		}
		fields := strings.Fields(string(stat[end+1:]))
		if len(fields) < 2 {
			return false
		}
		pid, _ = strconv.Atoi(fields[1])
	}
	return false
}

// describePids names up to five processes as "pid (comm)".
func describePids(pids []int) string {
	var parts []string
	for i, p := range pids {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(pids)-i))
			break
		}
		comm, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/comm")
		parts = append(parts, fmt.Sprintf("%d %s", p, strings.TrimSpace(string(comm))))
	}
	return strings.Join(parts, ", ")
}

// systemdBooted reports whether systemd is the init system (sd_booted).
func systemdBooted() bool { return fileExists("/run/systemd/system") }

// systemdUnitCgroup reports whether dir is the cgroup of a systemd unit.
func systemdUnitCgroup(dir string) bool {
	for _, suffix := range []string{".service", ".scope", ".slice", ".socket", ".mount", ".swap"} {
		if strings.HasSuffix(dir, suffix) {
			return true
		}
	}
	return false
}

// systemdDelegated reports whether systemd marked dir as delegated: it sets
// trusted.delegate (and user.delegate, since v251) on Delegate=yes units.
func systemdDelegated(dir string) bool {
	for _, attr := range []string{"trusted.delegate", "user.delegate"} {
		buf := make([]byte, 8)
		if n, err := unix.Getxattr(dir, attr, buf); err == nil && string(buf[:n]) == "1" {
			return true
		}
	}
	return false
}
