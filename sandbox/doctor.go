package sandbox

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/mcpsandbox/mcpsandbox/sandbox/cgroups"
	"github.com/mcpsandbox/mcpsandbox/sandbox/seccomp"
	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// Report is what `mcpsandbox doctor` found: for each part of the default
// confinement, whether this host can enforce it for this user, and if not,
// what is missing and how to fix it.
type Report struct {
	Kernel  string
	Root    bool // the supervisor runs as root (dynamic uids, no user namespace)
	Checks  []Check
	Cgroups cgroups.Report
}

// Check is one line of the report. Detail and Fix name settings (and the
// host check) as {Field} references, which Write and Problem render the
// caller's way.
type Check struct {
	Part     string // e.g. "user namespace"
	OK       bool
	Required bool   // the default confinement needs it for this user
	Detail   string // what was found
	Fix      string // how to fix it; empty when OK
}

// detail is err as a Check's Detail: the settings it names kept as
// references, for Write to render (err.Error() would name them as Go does).
func detail(err error) string { return field.Message(err, field.Keep) }

// OK reports whether every required part can be enforced.
func (r Report) OK() bool {
	for _, c := range r.Checks {
		if c.Required && !c.OK {
			return false
		}
	}
	return true
}

// Problem names the required parts this host cannot enforce, each with its
// fix (settings named by name); nil when it can enforce them all.
func (r Report) Problem(name field.Namer) error {
	var missing []string
	for _, c := range r.Checks {
		if !c.Required || c.OK {
			continue
		}
		m := c.Part + ": " + field.Refs(c.Detail, name)
		if c.Fix != "" {
			m += " (fix: " + field.Refs(c.Fix, name) + ")"
		}
		missing = append(missing, m)
	}
	if len(missing) == 0 {
		return nil
	}
	return errors.New(strings.Join(missing, "; "))
}

// Write prints the report for people, with the settings that fixes name
// rendered by name.
func (r Report) Write(w io.Writer, name field.Namer) error {
	var b strings.Builder
	who := "as an unprivileged user: servers run under your uid in a user namespace"
	if r.Root {
		who = fmt.Sprintf("as root: each server gets its own uid/gid from %d–%d", DynamicIDFirst, DynamicIDFirst+DynamicIDCount-1)
	}
	fmt.Fprintf(&b, "Linux %s, running %s\n\n", r.Kernel, who)
	for _, c := range r.Checks {
		status := "ok  "
		switch {
		case !c.OK && c.Required:
			status = "FAIL"
		case !c.OK:
			status = "warn"
		}
		fmt.Fprintf(&b, "  %s  %-22s %s\n", status, c.Part, field.Refs(c.Detail, name))
		if c.Fix != "" && !c.OK {
			fmt.Fprintf(&b, "        %-22s fix: %s\n", "", field.Refs(c.Fix, name))
		}
	}
	fmt.Fprintf(&b, "\ncgroups (%s):", r.Cgroups.Mode)
	for _, ctl := range r.Cgroups.Controllers {
		fmt.Fprintf(&b, " %s %s;", ctl.Name, okOr(ctl.Usable, "enforceable", "NOT enforceable"))
	}
	b.WriteString(" own cgroup")
	keys := make([]string, 0, len(r.Cgroups.Own))
	for k := range r.Cgroups.Own {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s:%s", k, r.Cgroups.Own[k])
	}
	b.WriteString("\n")
	if r.OK() {
		b.WriteString("\nThe default confinement can be enforced on this host.\n")
	} else {
		b.WriteString("\nThe default confinement CANNOT be enforced: confined servers will not start until the FAIL lines are fixed.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Doctor examines this host. It creates and removes a cgroup and starts one
// confined /bin/true, exactly as `run` would.
func Doctor() Report {
	r := Report{Kernel: kernelRelease(), Root: os.Geteuid() == 0}
	r.Checks = append(r.Checks, checkKernelAPIs()...)
	r.Checks = append(r.Checks, checkNamespaces(r.Root), checkUserNamespaces(r.Root))
	r.Checks = append(r.Checks, checkServerIdentity(r.Root), checkGrantLocks(), checkGrantSockets(), checkRootGrants(r.Root), checkHostInformation())
	r.Checks = append(r.Checks, checkSeccomp(), checkLandlock(), checkUserBudgets(r.Root))
	r.Cgroups = cgroups.Info()
	r.Checks = append(r.Checks, checkCgroups(r.Cgroups), checkCPUWeight(r.Cgroups))
	r.Checks = append(r.Checks, checkCgroupHome()...)
	r.Checks = append(r.Checks, checkEndToEnd(r.OK()))
	return r
}

func kernelRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return "(unknown)"
	}
	return unix.ByteSliceToString(u.Release[:])
}

// checkKernelAPIs probes the system calls the sandbox is built on; each
// answers EBADF/EINVAL to a harmless call when present, ENOSYS when not.
func checkKernelAPIs() []Check {
	present := func(err error) bool { return err != unix.ENOSYS }
	var checks []Check
	fd, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS})
	if err == nil {
		unix.Close(fd)
	}
	checks = append(checks, Check{Part: "openat2", Required: true, OK: err == nil,
		Detail: okOr(err == nil, "resolves granted paths without following symlinks", fmt.Sprint("openat2: ", err)),
		Fix:    "Linux 5.6 or later is needed"})
	errTree := unix.MountSetattr(-1, "", unix.AT_EMPTY_PATH, &unix.MountAttr{})
	_, errOpen := unix.OpenTree(-1, "", unix.AT_EMPTY_PATH)
	ok := present(errTree) && present(errOpen)
	checks = append(checks, Check{Part: "mount API", Required: true, OK: ok,
		Detail: okOr(ok, "open_tree, move_mount, mount_setattr", fmt.Sprintf("mount_setattr: %v, open_tree: %v", errTree, errOpen)),
		Fix:    "Linux 5.12 or later is needed"})
	err = unix.CloseRange(1<<30, 1<<30, unix.CLOSE_RANGE_CLOEXEC)
	checks = append(checks, Check{Part: "close_range", Required: true, OK: err == nil,
		Detail: okOr(err == nil, "closes inherited descriptors at exec", fmt.Sprint("close_range(CLOEXEC): ", err)),
		Fix:    "Linux 5.11 or later is needed"})
	return checks
}

func okOr(ok bool, yes, no string) string {
	if ok {
		return yes
	}
	return no
}

// namespaceFlags are what every sandbox is started with (plus a user
// namespace when unprivileged; the cgroup namespace comes later).
var namespaceFlags = []struct {
	name string
	flag uintptr
}{
	{"mount", unix.CLONE_NEWNS}, {"pid", unix.CLONE_NEWPID}, {"ipc", unix.CLONE_NEWIPC},
	{"uts", unix.CLONE_NEWUTS}, {"net", unix.CLONE_NEWNET}, {"cgroup", unix.CLONE_NEWCGROUP},
}

// checkNamespaces starts /bin/true in every namespace a sandbox uses, and
// on failure in each alone, to name the one that is refused.
func checkNamespaces(root bool) Check {
	c := Check{Part: "namespaces", Required: true}
	var all uintptr
	var names []string
	for _, ns := range namespaceFlags {
		all |= ns.flag
		names = append(names, ns.name)
	}
	if err := trueIn(all, root); err == nil {
		c.OK, c.Detail = true, strings.Join(names, ", ")
		return c
	}
	var refused []string
	for _, ns := range namespaceFlags {
		if err := trueIn(ns.flag, root); err != nil {
			refused = append(refused, fmt.Sprintf("%s (%v)", ns.name, err))
		}
	}
	c.Detail = "refused: " + strings.Join(refused, ", ")
	c.Fix = "run mcpsandbox on the host or in a container allowed to create namespaces (e.g. not under a seccomp or AppArmor profile that forbids unshare)"
	return c
}

// trueIn runs /bin/true in new namespaces, inside a user namespace that maps
// the caller when not root.
func trueIn(flags uintptr, root bool) error {
	attr := &syscall.SysProcAttr{Cloneflags: flags}
	if !root {
		attr.Cloneflags |= unix.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	}
	pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{Sys: attr})
	if err != nil {
		return err
	}
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
		return err
	}
	if !ws.Exited() || ws.ExitStatus() != 0 {
		return fmt.Errorf("/bin/true ended with status %v", ws)
	}
	return nil
}

// checkUserNamespaces reports the knobs that commonly disable unprivileged
// user namespaces; they matter only when mcpsandbox does not run as root.
func checkUserNamespaces(root bool) Check {
	c := Check{Part: "user namespace", Required: !root}
	var problems, fixes []string
	label := appArmorLabel()
	if v, err := readSysctl("/proc/sys/user/max_user_namespaces"); err == nil && v == "0" {
		problems = append(problems, "user.max_user_namespaces is 0")
		fixes = append(fixes, "sysctl -w user.max_user_namespaces=15000")
	}
	if v, err := readSysctl("/proc/sys/kernel/unprivileged_userns_clone"); err == nil && v == "0" {
		problems = append(problems, "kernel.unprivileged_userns_clone is 0")
		fixes = append(fixes, "sysctl -w kernel.unprivileged_userns_clone=1")
	}
	if v, err := readSysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); err == nil && v == "1" {
		// Only a program under a profile may create them: under one, the
		// attempt below tells whether the profile allows it.
		if appArmorRefuses(label, root) {
			problems = append(problems, "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1, as on Ubuntu 23.10+) and this binary runs under no AppArmor profile")
			fixes = append(fixes, appArmorFix())
		}
	}
	if !root && len(problems) == 0 {
		if err := trueIn(unix.CLONE_NEWNS, false); err != nil {
			problems = append(problems, fmt.Sprintf("creating one failed: %v", err))
		}
	}
	// Named when there is one: on Ubuntu it is what lets this binary have them.
	profile := ""
	if label != "" && label != "unconfined" {
		profile = "; this binary runs under AppArmor profile " + label
	}
	switch {
	case len(problems) == 0 && root:
		c.OK, c.Detail = true, "not needed as root; available to unprivileged users"+profile
	case len(problems) == 0:
		c.OK, c.Detail = true, "available: servers run under your own uid, mapped one to one"+profile
	default:
		c.Detail = strings.Join(problems, "; ")
		if root {
			c.Detail += " (not needed as root)"
		}
		c.Fix = strings.Join(append(fixes, "or run the servers in the system service (`sudo mcpsandbox service install`), which runs as root and needs no user namespaces"), "; ")
	}
	return c
}

// packagedBinary is where the packages install the binary.
const packagedBinary = "/usr/bin/mcpsandbox"

// appArmorProfileFor is where the packages and packaging/install.sh put
// the profile for exe: named after its path, as Debian names profiles.
func appArmorProfileFor(exe string) string {
	return "/etc/apparmor.d/" + strings.ReplaceAll(strings.TrimPrefix(exe, "/"), "/", ".")
}

// appArmorLabel is the AppArmor profile this process runs under
// ("unconfined" when none; "" when AppArmor does not say).
func appArmorLabel() string {
	for _, p := range []string{"/proc/self/attr/apparmor/current", "/proc/self/attr/current"} {
		if b, err := os.ReadFile(p); err == nil {
			label, _, _ := strings.Cut(strings.TrimSpace(string(b)), " (")
			return label
		}
	}
	return ""
}

// appArmorRefuses: under the restriction, a process under no profile (or
// root's, for the unprivileged users it reports on) gets no user namespace.
func appArmorRefuses(label string, root bool) bool {
	return root || label == "" || label == "unconfined"
}

// appArmorFix is the profile that lets this binary create user namespaces
// under Ubuntu's restriction, as VS Code's and other packages ship one:
// the packages' own for the binary they install.
func appArmorFix() string {
	exe, err := os.Executable()
	if err != nil {
		exe = "/usr/local/bin/mcpsandbox"
	}
	_, err = os.Stat(appArmorProfileFor(exe))
	return appArmorFixFor(exe, err == nil)
}

func appArmorFixFor(exe string, profileInstalled bool) string {
	profile := appArmorProfileFor(exe)
	switch {
	case profileInstalled:
		return "load the AppArmor profile installed for it, which allows them: `sudo apparmor_parser -r " + profile + "`"
	case exe == packagedBinary:
		return "install the package's AppArmor profile, which allows them (packaging/apparmor/usr.bin.mcpsandbox; the .deb, the .rpm and packaging/install.sh put it in " + profile + "), and load it: `sudo apparmor_parser -r " + profile + "`"
	}
	return fmt.Sprintf("give the binary an AppArmor profile that allows user namespaces: "+
		"`printf 'abi <abi/4.0>,\\ninclude <tunables/global>\\nprofile mcpsandbox %s flags=(unconfined) {\\n  userns,\\n}\\n' "+
		"| sudo tee %s && sudo apparmor_parser -r %s`", exe, profile, profile)
}

func readSysctl(path string) (string, error) {
	b, err := os.ReadFile(path)
	return strings.TrimSpace(string(b)), err
}

func checkSeccomp() Check {
	c := Check{Part: "seccomp", Required: true}
	ok, version, err := seccomp.Info()
	if !ok {
		c.Detail = fmt.Sprintf("libseccomp %s: %v", version, err)
		c.Fix = "see the message; the default profile must compile and the kernel must support seccomp filters"
		return c
	}
	prog, _ := seccomp.Compile("default", NetNone.SocketFamilies(), false)
	c.OK, c.Detail = true, fmt.Sprintf("libseccomp %s; the default profile compiles to %d BPF instructions", version, len(prog)/8)
	return c
}

func checkCgroups(cg cgroups.Report) Check {
	c := Check{Part: "cgroups", Required: true, OK: cg.OK(), Detail: "mode " + cg.Mode}
	if !cg.OK() {
		// When no cgroup can be created at all, every controller fails for
		// that one reason.
		problems := []string{cg.Problem}
		if cg.CanCreate {
			problems = nil
			for _, ctl := range cg.Controllers {
				if !ctl.Usable {
					problems = append(problems, ctl.Name+": "+ctl.Problem)
				}
			}
		}
		// The cgroup messages already end with their fix, its references
		// kept for Write (cgroups.Report).
		c.Detail += ": " + strings.Join(problems, "; ")
		return c
	}
	c.Detail += "; memory, pids and cpu limits can be enforced"
	return c
}

// checkEndToEnd starts /bin/true under the full default confinement: the
// one check that cannot miss anything the others overlook.
func checkEndToEnd(tryIt bool) Check {
	c := Check{Part: "confined /bin/true", Required: true}
	if !tryIt {
		c.Detail = "not tried: it would fail on the FAIL lines above"
		return c
	}
	spec := Spec{Name: "doctor", Args: []string{"/bin/true"}, TmpSize: 1 << 20, NoFile: 64, Seccomp: "default", Memory: 64 << 20, Pids: 16}
	start := time.Now()
	p, err := Start(spec, slog.New(slog.DiscardHandler))
	if err != nil {
		c.Detail, c.Fix = detail(err), "fix the FAIL lines above; the message names the step that failed"
		return c
	}
	defer p.Close()
	p.Stdin().Close()
	go io.Copy(io.Discard, p.Stdout())
	go io.Copy(io.Discard, p.Stderr())
	select {
	case <-p.Done():
	case <-time.After(30 * time.Second):
		p.Kill()
		c.Detail = "did not finish within 30s"
		return c
	}
	if ex := p.Exit(); ex.Failed() {
		c.Detail = "started but " + ex.String()
		return c
	}
	c.OK, c.Detail = true, fmt.Sprintf("started and exited 0 in %v", time.Since(start).Round(time.Millisecond))
	return c
}
