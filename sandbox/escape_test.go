package sandbox

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/sandbox/cgroups"
)

// The escape test runs internal/hostile confined with `mcpsandbox run`'s
// default policy and asserts that every escape class it tries is blocked,
// first with the supervisor as root and then as an unprivileged user (this
// test binary re-run as escapeUser in a cgroup delegated to it).

const (
	escapeUser        = "mcpsandbox-test" // created by scripts/test-setup.sh
	escapeChildEnv    = "MCPSANDBOX_ESCAPE_CHILD"
	escapeHostileEnv  = "MCPSANDBOX_ESCAPE_HOSTILE"
	escapeCallTimeout = 3 * time.Minute
)

type escapeRow struct {
	class string
	host  func(c *escapeCanaries, t *testing.T)
}

// escapeChecks is the table: one row per escape class the hostile server
// reports, with what the host side can verify on top of its report.
var escapeChecks = []escapeRow{
	{"host_secrets", nil},
	{"write_outside_grants", (*escapeCanaries).checkNothingWritten},
	{"symlink_in_granted_dir", nil}, // the second start is its own subtest
	{"proc_root_traversal", nil},
	{"host_service_sockets", nil},
	{"program_rewrite", nil}, // its own binary, bound alone; in a grant: program_in_grant
	{"grant_sockets", func(c *escapeCanaries, t *testing.T) {
		escapeNoConnection(t, "--rw grant's unix socket", c.rwSocket)
		escapeNoConnection(t, "--ro grant's unix socket", c.roSocket)
	}},
	{"net_host_loopback_tcp", func(c *escapeCanaries, t *testing.T) { escapeNoConnection(t, "tcp", c.tcp) }},
	{"net_host_abstract_unix", func(c *escapeCanaries, t *testing.T) { escapeNoConnection(t, "abstract unix", c.abstract) }},
	{"net_host_unix_path", func(c *escapeCanaries, t *testing.T) { escapeNoConnection(t, "unix path", c.unixPath) }},
	{"net_namespace", nil},
	{"socket_inet", nil},
	{"socket_other_families", nil},
	{"socketpair_other_families", nil},
	{"ptrace_host", (*escapeCanaries).checkHostProcessUntouched},
	{"signal_host", (*escapeCanaries).checkHostProcessUntouched},
	{"process_vm_host", nil},
	{"ptrace_seccomp", nil},
	{"reaper_access", nil},
	{"host_processes_visible", nil},
	{"proc_exe_write", nil},
	{"tty_access", nil},
	{"tiocsti_seccomp", nil},
	{"leaked_fds", nil},
	{"env_secrets", nil},
	{"uid_root", nil},
	{"setuid_root", nil},
	{"capabilities", nil},
	{"no_new_privs", nil},
	{"setuid_binaries", nil},
	{"setuid_planting", (*escapeCanaries).checkNoSetIDFiles},
	{"open_by_handle_at", nil},
	{"setid_shared_mapping", (*escapeCanaries).checkSetIDGrantRefused},
	{"locks_on_grants", (*escapeCanaries).checkLocksReleased},
	{"lease_grant_file", nil},
	{"mount", nil},
	{"user_namespaces", nil},
	{"other_namespaces", nil},
	{"setns", nil},
	{"pivot_root_chroot", nil},
	{"cgroupfs", nil}, // its own cgroup may show, read-only; nothing more

	{"seccomp_active", nil},
	{"seccomp_arch_bypass", nil},
	{"keyctl", nil},
	{"bpf", nil},
	{"perf_event_open", nil},
	{"userfaultfd", nil},
	{"io_uring", nil},
	{"kernel_modules", nil},
	{"kexec", nil},
	{"reboot", nil},
	{"swap_acct", nil},
	{"raw_io", nil},
	{"personality_aslr", nil},
	{"dev_nodes", nil},
	{"sys_only_cgroup", nil},
	{"proc_sys_writes", nil},
	{"sysrq_trigger", nil},
	{"proc_masked", nil},
	{"kallsyms_addresses", nil},
	{"kernel_log", nil},
	{"ipc_host", nil},
	{"proc_host_info", nil},
	{"proc_cmdline", nil},
	{"proc_interrupts", nil},
	{"proc_softirqs", nil},
	{"proc_diskstats", nil},
	{"proc_pressure", nil},
	{"proc_loadavg", nil},
	{"proc_boot_id", nil},
	{"mountinfo_host_facts", nil}, // what stays: escape_mounts_test.go
	{"aio_budget", nil},
	{"inotify_share", nil}, // the host user's own share: TestConfinedUserBudgets
	{"clock_set", nil},
	{"hostname_set", (*escapeCanaries).checkHostnameUnchanged},
	{"rlimit_raise", nil},
}

// escapeHostFiles are the host's files whose first line a class's report
// must not show: the hostile server quotes what it read in their place.
var escapeHostFiles = map[string][]string{
	"proc_cmdline":    {"/proc/cmdline"},
	"proc_interrupts": {"/proc/interrupts"},
	"proc_softirqs":   {"/proc/softirqs"},
	"proc_diskstats":  {"/proc/diskstats"},
	"proc_pressure":   {"/proc/pressure/cpu", "/proc/pressure/io", "/proc/pressure/memory"},
	"proc_boot_id":    {"/proc/sys/kernel/random/boot_id"},
}

// escapeShows lists the files of escapeHostFiles[class] whose first line
// detail quotes.
func escapeShows(class, detail string) []string {
	var shown []string
	for _, p := range escapeHostFiles[class] {
		data, err := os.ReadFile(p)
		if err != nil {
			continue // not on this kernel
		}
		first, _, _ := strings.Cut(string(data), "\n")
		if len(first) > 120 {
			first = first[:120] // as far as the report quotes
		}
		if strings.TrimSpace(first) != "" && strings.Contains(detail, first) {
			shown = append(shown, p)
		}
	}
	return shown
}

func TestEscape(t *testing.T) {
	requireConfinement(t)
	if os.Getenv(escapeChildEnv) != "" {
		// This binary re-run by the root part as the unprivileged supervisor.
		escapeTable(t, os.Getenv(escapeHostileEnv))
		return
	}
	hostile := testenv.BuildHostile(t)
	if os.Geteuid() != 0 {
		// An ordinary user (in the guest tier, in a delegated scope): the
		// unprivileged path only, as this user.
		t.Run("unprivileged", func(t *testing.T) { escapeTable(t, hostile) })
		return
	}
	t.Run("root", func(t *testing.T) { escapeTable(t, hostile) })
	t.Run("unprivileged", func(t *testing.T) { escapeAsUnprivileged(t, hostile) })
}

// TestEscapeProbesSeeThroughAWeakSandbox calibrates the hostile server: run
// under bubblewrap, which has namespaces but no seccomp filter and passes
// the environment and descriptors on, the probes must report exactly those
// gaps, and still find the host's files and sockets out of reach. A probe
// that could never report an escape would make the table above worthless.
func TestEscapeProbesSeeThroughAWeakSandbox(t *testing.T) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		t.Fatalf("bubblewrap is needed to calibrate the hostile server (%v): run scripts/test-setup.sh", err)
	}
	hostile := testenv.BuildHostile(t)
	c := newEscapeCanaries(t, hostile)
	cmd := exec.Command(bwrap, "--unshare-all", "--uid", "65534", "--gid", "65534", "--die-with-parent",
		"--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
		"--symlink", "usr/bin", "/bin", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
		"--ro-bind", filepath.Dir(hostile), filepath.Dir(hostile),
		"--ro-bind", c.roDir, c.roDir, "--bind", c.rwDir, c.rwDir, hostile)
	report := escapeCall(t, &mcp.CommandTransport{Command: cmd}, c.args, func() string { return "bwrap" })

	// bwrap applies no seccomp filter and keeps the caller's environment
	// and inherited descriptors.
	open := []string{
		"seccomp_active", "keyctl", "io_uring", "userfaultfd", "tiocsti_seccomp",
		"seccomp_arch_bypass", "ptrace_seccomp", "socket_inet", "personality_aslr", "leaked_fds", "env_secrets",
		"setuid_planting", "setid_shared_mapping", "lease_grant_file", "aio_budget", "socketpair_other_families", "proc_host_info",
		"proc_cmdline", "proc_interrupts", "proc_softirqs", "proc_diskstats", "proc_pressure", "proc_loadavg", "proc_boot_id",
		"grant_sockets", "mountinfo_host_facts",
	}
	// Debian's kernels add perf_event_paranoid 3: no perf for unprivileged
	// users at all, so there the kernel closes that gap itself.
	if v, err := readSysctl("/proc/sys/kernel/perf_event_paranoid"); err == nil && v != "3" {
		open = append(open, "perf_event_open")
	}
	for _, class := range open {
		if r, ok := report[class]; !ok || r.Blocked {
			t.Errorf("%s: the probe missed a gap bwrap leaves open: %+v", class, r)
		}
	}
	// What bwrap's namespaces and root do stop.
	for _, class := range []string{
		"host_secrets", "write_outside_grants", "symlink_in_granted_dir", "net_host_loopback_tcp",
		"net_host_abstract_unix", "net_host_unix_path", "ipc_host", "host_processes_visible", "sys_only_cgroup",
	} {
		if r, ok := report[class]; !ok || !r.Blocked {
			t.Errorf("%s: reported an escape bwrap does not allow: %+v", class, r)
		}
	}
	// The host-side check of the /proc rows sees the host's files in the
	// report (the files whose first line does not change).
	for _, class := range []string{"proc_cmdline", "proc_interrupts", "proc_softirqs", "proc_boot_id"} {
		if shown := escapeShows(class, report[class].Detail); len(shown) == 0 {
			t.Errorf("%s: the report does not quote the host's file bwrap shows: %s", class, report[class].Detail)
		}
	}
	c.checkNothingWritten(t)
	escapeNoConnection(t, "tcp", c.tcp)
	if planted := escapeSetIDFiles(t, c.rwDir); len(planted) == 0 {
		t.Errorf("without seccomp the server's set-ID files should be on the host, found none in %s", c.rwDir)
	}
}

// TestEscapeProbesSeeTheHostsCgroups calibrates the cgroup rows: bubblewrap
// showing the host's /sys, with one cgroup hierarchy bound writable, must be
// reported as sysfs in /sys, other cgroups visible and a writable cgroupfs.
func TestEscapeProbesSeeTheHostsCgroups(t *testing.T) {
	requireConfinement(t)
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		t.Fatalf("bubblewrap is needed to calibrate the hostile server (%v): run scripts/test-setup.sh", err)
	}
	if escapeIsUnified() {
		t.Skip("the writable bind below names a cgroup v1 hierarchy")
	}
	// In a cgroup of its own, the hierarchies' tops lie outside the test's
	// cgroup namespace and hold another cgroup (this one) whatever the host.
	testenv.OuterLimit(t, 1<<30, 1024)
	hostile := testenv.BuildHostile(t)
	cmd := exec.Command(bwrap, "--unshare-all", "--uid", "65534", "--gid", "65534", "--die-with-parent",
		"--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
		"--symlink", "usr/bin", "/bin", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
		"--ro-bind", "/sys", "/sys", "--bind", cgroups.Mount+"/pids", cgroups.Mount+"/pids",
		"--ro-bind", filepath.Dir(hostile), filepath.Dir(hostile), hostile)
	report := escapeCall(t, &mcp.CommandTransport{Command: cmd}, map[string]any{}, func() string { return "bwrap" })
	for class, wants := range map[string][]string{
		"cgroupfs":        {"is writable", "another cgroup is visible", "not this process's own"},
		"sys_only_cgroup": {"sysfs mounted at /sys", "/sys holds /sys/kernel"},
	} {
		r := report[class]
		if r.Blocked {
			t.Errorf("%s: reported blocked with the host's /sys shown: %s", class, r.Detail)
		}
		for _, w := range wants {
			if !strings.Contains(r.Detail, w) {
				t.Errorf("%s: the report does not say %q: %s", class, w, r.Detail)
			}
		}
	}
}

// escapeSpec is `mcpsandbox run`'s default confinement with one --ro and one
// --rw grant.
func escapeSpec(hostile string, ro, rw []string) Spec {
	p := policy.Default()
	net := NetNone
	if p.Net == policy.NetHost {
		net = NetHost
	}
	return Spec{
		Name:      "hostile",
		Args:      []string{hostile},
		ReadOnly:  ro,
		ReadWrite: rw,
		TmpSize:   int64(p.TmpSize),
		Net:       net,
		User:      p.User,
		NoFile:    p.NoFile,
		Seccomp:   p.Seccomp,
		Memory:    int64(p.Memory),
		Pids:      p.Pids,
		CPU:       p.CPU,
	}
}

type escapeResult struct {
	Blocked bool   `json:"blocked"`
	Detail  string `json:"detail"`
}

func escapeTable(t *testing.T, hostile string) {
	c := newGrantedEscapeCanaries(t, hostile)
	spec := escapeSpec(hostile, []string{c.roDir, c.setIDDir}, []string{c.rwDir})
	report := escapeRun(t, spec, c.args)

	for _, row := range escapeChecks {
		t.Run(row.class, func(t *testing.T) {
			r, ok := report[row.class]
			if !ok {
				t.Fatalf("the hostile server did not report %s", row.class)
			}
			if !r.Blocked {
				t.Errorf("NOT BLOCKED: %s", r.Detail)
			} else {
				t.Logf("blocked: %s", r.Detail)
			}
			if row.host != nil {
				row.host(c, t)
			}
			if shown := escapeShows(row.class, r.Detail); len(shown) > 0 {
				t.Errorf("the report shows the host's %s", strings.Join(shown, ", "))
			}
		})
	}
	for class := range report {
		if !slices.ContainsFunc(escapeChecks, func(r escapeRow) bool { return r.class == class }) {
			t.Errorf("the hostile server reports %s, which has no row here: add it to escapeChecks", class)
		}
	}

	t.Run("program_rewrite/program_in_grant", func(t *testing.T) { escapeProgramInGrant(t, hostile) })
	t.Run("net_egress", func(t *testing.T) { escapeEgressTable(t, hostile) })
	t.Run("net_none_resolver", func(t *testing.T) { escapeResolverTable(t, hostile) })
	t.Run("symlink_in_granted_dir/second_start", func(t *testing.T) { escapeSecondStart(t, c, hostile) })
	t.Run("net_host", func(t *testing.T) { escapeNetHostTable(t, hostile) })
}

// escapeSecondStart binds a link the first server planted in its --rw dir,
// as a later policy might: the mount must not follow it to the secret.
func escapeSecondStart(t *testing.T, c *escapeCanaries, hostile string) {
	link := filepath.Join(c.rwDir, "link-secret-dir")
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the first server could not plant %s (lstat: %v), so the second start tests nothing", link, err)
	}
	spec := escapeSpec(hostile, []string{c.roDir, c.setIDDir, link}, []string{c.rwDir})
	p, err := Start(spec, escapeLogger(t))
	if err != nil {
		if !strings.Contains(err.Error(), link) || !strings.Contains(err.Error(), "symlink") {
			t.Fatalf("refused, but the error does not name the planted symlink %s: %v", link, err)
		}
		t.Logf("refused as it should: %v", err)
		return
	}
	// Started anyway: then the secret must still be out of reach.
	p.Close()
	report := escapeRun(t, spec, c.args)
	for _, class := range []string{"host_secrets", "symlink_in_granted_dir"} {
		if r := report[class]; !r.Blocked {
			t.Errorf("second start with %s bound: %s NOT BLOCKED: %s", link, class, r.Detail)
		}
	}
}

// escapeRun starts spec, calls the escape tool with args over the SDK client
// and returns the report.
func escapeRun(t *testing.T, spec Spec, args map[string]any) map[string]escapeResult {
	t.Helper()
	p, err := Start(spec, escapeLogger(t))
	if err != nil {
		t.Fatalf("starting the hostile server confined: %v", err)
	}
	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		s := bufio.NewScanner(p.Stderr())
		for s.Scan() {
			t.Logf("hostile stderr: %s", s.Text())
		}
	}()
	defer func() {
		p.Close()
		<-stderrDone
	}()

	return escapeCall(t, &mcp.IOTransport{Reader: io.NopCloser(p.Stdout()), Writer: p.Stdin()}, args,
		func() string { return escapeExitSoFar(p) })
}

// escapeCall connects the SDK client over tr, calls the escape tool with args
// and returns the report; state says how the server is doing, for errors.
func escapeCall(t *testing.T, tr mcp.Transport, args map[string]any, state func() string) map[string]escapeResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), escapeCallTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "escape-test", Version: "0"}, nil)
	sess, err := client.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("initialize with the hostile server: %v (server: %v)", err, state())
	}
	defer sess.Close()
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "escape", Arguments: args})
	if err != nil {
		t.Fatalf("tools/call escape: %v (server: %v)", err, state())
	}
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("tools/call escape answered %+v", res)
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("tools/call escape answered %T, want text", res.Content[0])
	}
	var report map[string]escapeResult
	if err := json.Unmarshal([]byte(text.Text), &report); err != nil {
		t.Fatalf("escape report: %v: %s", err, text.Text)
	}
	return report
}

func escapeExitSoFar(p Process) string {
	select {
	case <-p.Done():
		return p.Exit().String()
	default:
		return "still running"
	}
}

func escapeLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(escapeTestWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type escapeTestWriter struct{ t *testing.T }

func (w escapeTestWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

func escapeRandom(t *testing.T) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// escapeCanaries is everything outside the sandbox the hostile server aims
// at, set up the way a user's machine would have it.
type escapeCanaries struct {
	hostile, secretFile, rwDir, roDir, writeCanary string
	setIDDir, setIDFile                            string // in rwDir, granted read-only on top
	tcp, unixPath, abstract                        net.Listener
	rwSocket, roSocket                             net.Listener // host programs' sockets in the grants
	host                                           *exec.Cmd
	hostname                                       string
	args                                           map[string]any
}

// newGrantedEscapeCanaries is newEscapeCanaries with the grant
// directories owned as a user's would be when the supervisor is root.
func newGrantedEscapeCanaries(t *testing.T, hostile string) *escapeCanaries {
	t.Helper()
	c := newEscapeCanaries(t, hostile)
	if os.Geteuid() == 0 {
		// A user's directory, as `--rw ~/notes` would grant: a root
		// supervisor idmaps it, so the server acts as that user in it.
		escapeOwnByUser(t, c.rwDir)
		// The --ro grant too: idmapped, the server owns its files there.
		escapeOwnByUser(t, c.roDir)
		escapeOwnByUser(t, filepath.Join(c.roDir, "granted-ro.txt"))
	}
	return c
}

func newEscapeCanaries(t *testing.T, hostile string) *escapeCanaries {
	t.Helper()
	token := escapeRandom(t)
	c := &escapeCanaries{hostile: hostile}

	home := testenv.SharedDir(t, "mcpsandbox-escape-home-")
	secretDir := filepath.Join(home, ".ssh")
	c.secretFile = filepath.Join(secretDir, "id_ed25519")
	escapeMust(t, os.Mkdir(secretDir, 0o700))
	escapeMust(t, os.WriteFile(c.secretFile, []byte("SECRET "+token+"\n"), 0o600))
	t.Setenv("HOME", home)

	outside := testenv.SharedDir(t, "mcpsandbox-escape-outside-")
	c.writeCanary = filepath.Join(outside, "written-by-server")
	c.roDir = testenv.SharedDir(t, "mcpsandbox-escape-ro-")
	escapeMust(t, os.WriteFile(filepath.Join(c.roDir, "granted-ro.txt"), []byte("read me\n"), 0o644))
	c.rwDir = testenv.SharedDir(t, "mcpsandbox-escape-rw-")
	escapeMust(t, os.Chmod(c.rwDir, 0o777)) // the server's uid is not the test's
	// A user's set-ID file in the --rw grant, made safe by a --ro grant on
	// its directory; writable by all, so that a weaker sandbox lets the probe
	// at it, and not executable.
	c.setIDDir = filepath.Join(c.rwDir, escapeSetIDDirName)
	c.setIDFile = filepath.Join(c.setIDDir, "prog")
	escapeMust(t, os.Mkdir(c.setIDDir, 0o755))
	escapeMust(t, os.WriteFile(c.setIDFile, []byte("#!/bin/false\n"), 0o666))
	escapeMust(t, os.Chmod(c.setIDFile, os.ModeSetuid|0o666))
	if os.Geteuid() == 0 {
		escapeOwnByUser(t, c.setIDFile)
		escapeMust(t, os.Chmod(c.setIDFile, os.ModeSetuid|0o666)) // chown clears it
	}

	var err error
	c.tcp, err = net.Listen("tcp", "127.0.0.1:0")
	escapeMust(t, err)
	c.unixPath, err = net.Listen("unix", filepath.Join(outside, "host.sock"))
	escapeMust(t, err)
	abstract := "mcpsandbox-escape-" + token
	c.abstract, err = net.Listen("unix", "@"+abstract)
	escapeMust(t, err)
	// A host program's sockets in the grants, as an agent's in a granted
	// home directory: present at the start, so masked.
	c.rwSocket, err = net.Listen("unix", filepath.Join(c.rwDir, "agent.sock"))
	escapeMust(t, err)
	c.roSocket, err = net.Listen("unix", filepath.Join(c.roDir, escapeROSocket))
	escapeMust(t, err)
	for _, l := range []net.Listener{c.tcp, c.unixPath, c.abstract, c.rwSocket, c.roSocket} {
		t.Cleanup(func() { l.Close() })
	}

	// A host process of the same user, for ptrace, signals and /proc.
	c.host = exec.Command(hostile, "canary", token)
	escapeMust(t, c.host.Start())
	t.Cleanup(func() {
		c.host.Process.Kill()
		c.host.Wait()
	})

	// System V and POSIX shared memory on the host.
	shmKey := int(time.Now().UnixNano()&0x3fffffff) | 1
	shmID, err := unix.SysvShmGet(shmKey, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o600)
	escapeMust(t, err)
	t.Cleanup(func() { unix.SysvShmCtl(shmID, unix.IPC_RMID, nil) })
	devShm := "/dev/shm/mcpsandbox-escape-" + token
	escapeMust(t, os.WriteFile(devShm, []byte("SECRET "+token+"\n"), 0o600))
	t.Cleanup(func() { os.Remove(devShm) })

	// A descriptor the supervisor forgot to mark close-on-exec.
	leaked, err := syscall.Open(c.secretFile, syscall.O_RDONLY, 0)
	escapeMust(t, err)
	t.Cleanup(func() { syscall.Close(leaked) })

	envName := "MCPSANDBOX_ESCAPE_SECRET"
	t.Setenv(envName, token)

	c.hostname, err = os.Hostname()
	escapeMust(t, err)

	c.args = map[string]any{
		"secret_file":     c.secretFile,
		"secret_dir":      secretDir,
		"write_canary":    c.writeCanary,
		"read_only_dir":   c.roDir,
		"read_write_dir":  c.rwDir,
		"tcp_addr":        c.tcp.Addr().String(),
		"unix_socket":     filepath.Join(outside, "host.sock"),
		"abstract_socket": abstract,
		"host_pid":        c.host.Process.Pid,
		"host_token":      token,
		"supervisor_pid":  os.Getpid(),
		"env_canary":      envName,
		"shm_key":         shmKey,
		"dev_shm_file":    devShm,
		"setid_file":      c.setIDFile,
		"host_boot_id":    escapeBootID(),
		"grant_sockets":   []string{c.rwSocket.Addr().String(), c.roSocket.Addr().String()},
	}
	escapeMountFacts(t, c.args)
	return c
}

// escapeROSocket is the host program's socket in the --ro grant.
const escapeROSocket = "host-program.sock"

func escapeBootID() string {
	data, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(data))
}

func escapeMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (c *escapeCanaries) checkNothingWritten(t *testing.T) {
	if _, err := os.Lstat(c.writeCanary); err == nil {
		t.Errorf("%s exists on the host", c.writeCanary)
	}
	ents, err := os.ReadDir(c.roDir)
	escapeMust(t, err)
	if len(ents) != 2 || ents[0].Name() != "granted-ro.txt" || ents[1].Name() != escapeROSocket {
		t.Errorf("the --ro dir changed on the host: %v", ents)
	}
	if ents, err := os.ReadDir(filepath.Dir(c.hostile)); err != nil || len(ents) != 1 {
		t.Errorf("the hostile binary's directory changed on the host: %v %v", ents, err)
	}
	if _, err := os.Lstat(filepath.Join(c.rwDir, "hardlink-secret")); err == nil {
		t.Errorf("a hard link to the secret appeared in the --rw dir")
	}
}

// checkNoSetIDFiles: nothing the server left in its --rw dir is set-user-ID
// or set-group-ID on the host, and it did leave files there (the probe
// creates plain ones before changing their modes).
func (c *escapeCanaries) checkNoSetIDFiles(t *testing.T) {
	if planted := escapeSetIDFiles(t, c.rwDir); len(planted) > 0 {
		t.Errorf("set-ID files on the host, in the --rw grant: %s", strings.Join(planted, ", "))
	}
	dir := filepath.Join(c.rwDir, "setid-planting")
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) == 0 {
		t.Fatalf("the server left no files in %s (%v): the check above saw nothing", dir, err)
	}
	t.Logf("%d files in %s, owned by %s on the host, none set-ID", len(ents), dir, escapeOwner(t, filepath.Join(dir, ents[0].Name())))
}

// escapeSetIDDirName holds the test's own set-ID canary in the --rw dir.
const escapeSetIDDirName = "setid-canary"

// escapeSetIDFiles lists what under dir is set-user-ID or set-group-ID,
// directories and the test's own canary aside (a setgid directory only
// passes its group on).
func escapeSetIDFiles(t *testing.T, dir string) []string {
	var planted []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == escapeSetIDDirName {
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
			planted = append(planted, fmt.Sprintf("%s (%s, owner %s)", p, fi.Mode(), escapeOwner(t, p)))
		}
		return nil
	})
	escapeMust(t, err)
	return planted
}

// checkSetIDGrantRefused: without the --ro grant on top, the set-ID canary
// in the --rw grant keeps the server from starting at all.
func (c *escapeCanaries) checkSetIDGrantRefused(t *testing.T) {
	p, err := Start(escapeSpec(c.hostile, []string{c.roDir}, []string{c.rwDir}), escapeLogger(t))
	if err == nil {
		p.Close()
		t.Fatalf("a server started with the set-ID %s writable in its --rw grant", c.setIDFile)
	}
	var fe *field.Error
	if !errors.As(err, &fe) || fe.Field != "ReadWrite" || !strings.Contains(err.Error(), c.setIDFile) {
		t.Fatalf("refused, but not as a ReadWrite error naming %s: %v", c.setIDFile, err)
	}
	if fi, err := os.Stat(c.setIDFile); err != nil || fi.Mode()&os.ModeSetuid == 0 {
		t.Errorf("the canary lost its bit (%v, %v): the check above saw nothing", fi.Mode(), err)
	}
}

// checkLocksReleased: whatever the server locked in its --ro grant is free
// again once it has ended.
func (c *escapeCanaries) checkLocksReleased(t *testing.T) {
	f, err := os.OpenFile(filepath.Join(c.roDir, "granted-ro.txt"), os.O_RDWR, 0)
	escapeMust(t, err)
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Errorf("flock after the server ended: %v", err)
	}
	wr := unix.Flock_t{Type: unix.F_WRLCK}
	if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &wr); err != nil {
		t.Errorf("fcntl F_WRLCK after the server ended: %v", err)
	}
}

func escapeOwner(t *testing.T, p string) string {
	var st unix.Stat_t
	escapeMust(t, unix.Lstat(p, &st))
	return fmt.Sprintf("%d:%d", st.Uid, st.Gid)
}

// escapeOwnByUser gives dir to escapeUser and that user's group.
func escapeOwnByUser(t *testing.T, dir string) {
	u, err := user.Lookup(escapeUser)
	if err != nil {
		t.Fatalf("the --rw grant is owned by %s, which is missing (%v): run scripts/test-setup.sh", escapeUser, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	escapeMust(t, os.Chown(dir, uid, gid))
}

// checkHostProcessUntouched: the canary is alive, not stopped, not traced.
func (c *escapeCanaries) checkHostProcessUntouched(t *testing.T) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.host.Process.Pid))
	if err != nil {
		t.Fatalf("host canary process: %v", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimSpace(v)
		switch k {
		case "State":
			if !strings.HasPrefix(v, "S") {
				t.Errorf("host canary process state %q, want sleeping", v)
			}
		case "TracerPid":
			if v != "0" {
				t.Errorf("host canary process is traced by %s", v)
			}
		}
	}
}

func (c *escapeCanaries) checkHostnameUnchanged(t *testing.T) {
	if h, _ := os.Hostname(); h != c.hostname {
		t.Errorf("host name changed from %q to %q", c.hostname, h)
	}
}

// escapeNoConnection: a connection that got through is in the accept queue
// by the time the report arrives, so a non-blocking accept sees it.
func escapeNoConnection(t *testing.T, what string, l net.Listener) {
	sc, err := l.(syscall.Conn).SyscallConn()
	escapeMust(t, err)
	var aerr error
	escapeMust(t, sc.Control(func(fd uintptr) {
		var nfd int
		nfd, _, aerr = unix.Accept4(int(fd), unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if aerr == nil {
			unix.Close(nfd)
		}
	}))
	switch {
	case aerr == nil:
		t.Errorf("a connection reached the host's %s listener", what)
	case !errors.Is(aerr, unix.EAGAIN):
		t.Errorf("checking the host's %s listener: %v", what, aerr)
	}
}

// escapeAsUnprivileged re-runs this test binary as escapeUser, in cgroups
// delegated to that user, so that the sandbox takes its user-namespace path.
func escapeAsUnprivileged(t *testing.T, hostile string) {
	u, err := user.Lookup(escapeUser)
	if err != nil {
		t.Fatalf("the unprivileged supervisor needs the user %s (%v): run scripts/test-setup.sh", escapeUser, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)

	// The binary belongs to the user, as a user's own install would: the
	// server must not be able to write it through /proc/1/exe either.
	dir := testenv.SharedDir(t, "mcpsandbox-escape-bin-")
	bin := filepath.Join(dir, "sandbox.test")
	escapeCopy(t, os.Args[0], bin)
	escapeMust(t, os.Chown(bin, uid, gid))

	cgroups := escapeDelegateCgroups(t, uid, gid)

	// sh waits for a line on stdin so that it can be moved into the
	// delegated cgroups before the test binary runs.
	cmd := exec.Command("/bin/sh", "-c", `read _ && exec "$0" "$@"`, bin,
		"-test.run=^TestEscape$", "-test.v", "-test.count=1", "-test.timeout=10m")
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=/", "TMPDIR=" + os.TempDir(),
		escapeChildEnv + "=1", escapeHostileEnv + "=" + hostile,
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}},
		Pdeathsig:  syscall.SIGKILL,
	}
	stdin, err := cmd.StdinPipe()
	escapeMust(t, err)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	escapeMust(t, cmd.Start())
	for _, procs := range cgroups {
		if err := os.WriteFile(procs, []byte(strconv.Itoa(cmd.Process.Pid)), 0); err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("moving the unprivileged supervisor into %s: %v", procs, err)
		}
	}
	io.WriteString(stdin, "go\n")
	stdin.Close()
	err = cmd.Wait()
	for _, line := range strings.Split(strings.TrimRight(out.String(), "\n"), "\n") {
		t.Log(line)
	}
	if err != nil {
		t.Errorf("the escape table as %s (uid %d, user namespace) failed: %v (its output is above)", escapeUser, uid, err)
	}
}

func escapeCopy(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	escapeMust(t, err)
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	escapeMust(t, err)
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	escapeMust(t, out.Close())
}

// escapeDelegateCgroups creates a cgroup owned by uid for every controller
// the sandbox uses and returns the cgroup.procs files to move the
// unprivileged supervisor in. It first puts the test under an outer limit;
// on cgroup v2 that also moves the test into a leaf, so that the delegated
// cgroup is a sibling with the memory and pids controllers available.
// Cleanup fails the test if the sandbox left cgroups behind.
func escapeDelegateCgroups(t *testing.T, uid, gid int) []string {
	t.Helper()
	testenv.OuterLimit(t, 4<<30, 4096)
	name := fmt.Sprintf("mcpsandbox-escape-%d", os.Getpid())
	var dirs []string
	t.Cleanup(func() {
		for _, d := range dirs {
			left, _ := filepath.Glob(filepath.Join(d, "*", "cgroup.procs"))
			// cgroup v2: the supervisor's own leaf stays, empty, for its next start.
			left = slices.DeleteFunc(left, func(f string) bool { return filepath.Base(filepath.Dir(f)) == cgroups.SupervisorLeaf })
			if len(left) > 0 {
				t.Errorf("the sandbox left cgroups behind under %s: %v", d, left)
			}
			for _, l := range left {
				os.Remove(filepath.Dir(l))
			}
			os.Remove(filepath.Join(d, cgroups.SupervisorLeaf))
			if err := os.Remove(d); err != nil {
				t.Errorf("removing the delegated cgroup: %v", err)
			}
		}
	})
	own, err := os.ReadFile("/proc/self/cgroup")
	escapeMust(t, err)
	unified := escapeIsUnified()
	for _, line := range strings.Split(strings.TrimSpace(string(own)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var dir string
		switch {
		case unified && parts[1] == "":
			dir = filepath.Join(cgroups.Mount, filepath.Dir(parts[2]), name)
		case !unified && slices.ContainsFunc(strings.Split(parts[1], ","), func(c string) bool {
			return c == "memory" || c == "pids" || c == "cpu" || c == "freezer"
		}):
			dir = filepath.Join(cgroups.Mount, parts[1], parts[2], name)
		default:
			continue
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatalf("delegating a cgroup to %s: %v", escapeUser, err)
		}
		dirs = append(dirs, dir)
		for _, f := range []string{"", "cgroup.procs", "tasks", "cgroup.subtree_control", "cgroup.threads"} {
			p := filepath.Join(dir, f)
			if err := os.Chown(p, uid, gid); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("delegating %s: %v", p, err)
			}
		}
	}
	if len(dirs) == 0 {
		t.Fatal("no cgroup hierarchy to delegate to the unprivileged supervisor")
	}
	procs := make([]string, len(dirs))
	for i, d := range dirs {
		procs[i] = filepath.Join(d, "cgroup.procs")
	}
	return procs
}

func escapeIsUnified() bool {
	var st unix.Statfs_t
	return unix.Statfs(cgroups.Mount, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC
}
