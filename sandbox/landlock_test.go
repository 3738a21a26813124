package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/containerd/cgroups/v3"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/sandbox/internal/initstage"
)

// The Landlock probe is this test binary run as a confined server: it
// tries each operation of llProbeEnv ("kind:arg|kind:arg...") and prints
// what each gave as JSON, "" for success.
const llProbeEnv = "MCPSANDBOX_LL_PROBE"

// A role hook in init, as the probe must not start the tests.
func init() {
	if ops := os.Getenv(llProbeEnv); ops != "" {
		os.Exit(runLandlockProbe(ops))
	}
}

func runLandlockProbe(ops string) int {
	res := map[string]string{}
	for _, op := range strings.Split(ops, "|") {
		kind, arg, _ := strings.Cut(op, ":")
		var err error
		switch kind {
		case "mkfifo":
			err = unix.Mkfifo(arg, 0o600)
		case "bind": // a unix socket at a path
			err = llBindUnix(arg)
		case "dial":
			var c net.Conn
			if c, err = net.Dial("unix", arg); err == nil {
				c.Close()
			}
		case "kill": // signal 0: permission and existence only
			pid, _ := strconv.Atoi(arg)
			err = unix.Kill(pid, 0)
		case "child": // the server signals a child of its own
			err = llSignalOwnChild()
		case "rename": // reparenting a file and a directory beneath arg
			err = llRenameAcross(arg)
		default:
			err = fmt.Errorf("unknown probe %q", kind)
		}
		res[op] = ""
		if err != nil {
			res[op] = err.Error()
		}
	}
	json.NewEncoder(os.Stdout).Encode(res)
	return 0
}

func llBindUnix(path string) error {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Bind(fd, &unix.SockaddrUnix{Name: path})
}

func llSignalOwnChild() error {
	cmd := exec.Command("/bin/sleep", "60")
	if err := cmd.Start(); err != nil {
		return err
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return err
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGTERM {
		return nil
	}
	return fmt.Errorf("the child was not ended by the signal: %v", err)
}

func llRenameAcross(dir string) error {
	a, b := filepath.Join(dir, "ll-a"), filepath.Join(dir, "ll-b")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(a, "f"), []byte("x"), 0o644); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(a, "f"), filepath.Join(b, "f")); err != nil {
		return err
	}
	if err := os.Link(filepath.Join(b, "f"), filepath.Join(a, "hardlink")); err != nil {
		return err
	}
	return os.Rename(b, filepath.Join(a, "ll-b"))
}

// llProbe runs the probe confined by spec and returns what each op gave.
func llProbe(t *testing.T, spec Spec, ops ...string) map[string]string {
	t.Helper()
	return llProbeLogged(t, spec, sbxLogger(t), ops...)
}

// llProbeLogged is llProbe with Start logging to log.
func llProbeLogged(t *testing.T, spec Spec, log *slog.Logger, ops ...string) map[string]string {
	t.Helper()
	spec.Args = []string{os.Args[0]}
	spec.Env = append(spec.Env, llProbeEnv+"="+strings.Join(ops, "|"))
	out, errOut, ex := sbxRunLogged(t, spec, log)
	if ex.Failed() {
		t.Fatalf("landlock probe: %v\nstderr:\n%s", ex, errOut)
	}
	var res map[string]string
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("landlock probe output: %v\n%s\nstderr:\n%s", err, out, errOut)
	}
	return res
}

// llKernelABI asks the kernel directly, apart from the code under test.
func llKernelABI(t *testing.T) int {
	r, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch errno {
	case 0:
		return int(r)
	case unix.ENOSYS, unix.EOPNOTSUPP:
		return 0
	}
	t.Fatalf("landlock_create_ruleset(VERSION): %v", errno)
	return 0
}

// llGrantDir is a writable grant outside /tmp (where t.TempDir lies): a
// grant beneath /tmp keeps FIFOs out of /tmp too (landlockPlaces).
func llGrantDir(t *testing.T) string {
	dir, err := os.MkdirTemp("/var/tmp", "mcpsandbox-landlock-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil { // the server's uid is not the test's
		t.Fatal(err)
	}
	return dir
}

func TestLandlockABIIsTheKernels(t *testing.T) {
	s := hostLandlock()
	if s.Err != nil {
		t.Fatalf("asking for the ABI failed: %v", s.Err)
	}
	if want := llKernelABI(t); s.ABI != want {
		t.Fatalf("ABI %d, the kernel says %d", s.ABI, want)
	}
	t.Logf("Landlock ABI here: %d", s.ABI)
}

func TestLandlockRulesetFollowsTheABI(t *testing.T) {
	cfg := &initConfig{}
	cfg.Tmpfs = []string{"/work/cache"}
	for abi := 0; abi <= 9; abi++ {
		a, rules := landlockAttr(abi), landlockRules(abi, cfg)
		switch {
		case abi < landlockFSABI:
			if a != (llsys.RulesetAttr{}) || rules != nil {
				t.Errorf("ABI %d: ruleset %+v, rules %+v; want none", abi, a, rules)
			}
			continue
		case a.HandledAccessFS != landlockSpecialFiles|llsys.AccessFSRefer:
			t.Errorf("ABI %d: handles %#x, want the special files and REFER only", abi, a.HandledAccessFS)
		case (a.Scoped != 0) != (abi >= landlockScopeABI):
			t.Errorf("ABI %d: scoped %#x", abi, a.Scoped)
		case abi >= landlockScopeABI && a.Scoped != llsys.ScopeAbstractUnixSocket|llsys.ScopeSignal:
			t.Errorf("ABI %d: scoped %#x, want abstract unix sockets and signals", abi, a.Scoped)
		}
		if rules == nil || rules.RootAccess != llsys.AccessFSRefer || rules.PrivateAccess&^a.HandledAccessFS != 0 ||
			rules.PrivateAccess&(llsys.AccessFSMakeChar|llsys.AccessFSMakeBlock) != 0 {
			t.Errorf("ABI %d: rules %+v", abi, rules)
		}
		if want := []string{"/dev/shm", "/tmp", sandboxHome, "/work/cache"}; rules != nil && !slices.Equal(rules.Places, want) {
			t.Errorf("ABI %d: places %v, want %v", abi, rules.Places, want)
		}
	}
}

// A rule covers everything beneath its place, a grant mounted there too:
// a place holding a writable grant is left out, and Describe says why.
func TestLandlockPlacesLeaveOutThoseHoldingWritableGrants(t *testing.T) {
	cfg := &initConfig{}
	cfg.Tmpfs = []string{"/work/cache", "/data/scratch"}
	cfg.Binds = []initstage.Bind{
		{Path: "/tmp/project", Writable: true},
		{Path: "/work"}, // read-only: no FIFO can be made there anyway
		{Path: "/data/scratch/keep", State: true, Writable: true},
	}
	places, withheld := landlockPlaces(cfg)
	if want := []string{"/dev/shm", sandboxHome, "/work/cache"}; !slices.Equal(places, want) {
		t.Errorf("places %v, want %v", places, want)
	}
	if len(withheld) != 2 || withheld["/tmp"] != "/tmp/project" || withheld["/data/scratch"] != "/data/scratch/keep" {
		t.Errorf("withheld %v", withheld)
	}
}

func TestLandlockDescribed(t *testing.T) {
	rw := llGrantDir(t)
	inTmp, err := os.MkdirTemp("/tmp", "mcpsandbox-landlock-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(inTmp)
	if err := os.Chmod(inTmp, 0o777); err != nil { // a grant the server may write, as Start requires
		t.Fatal(err)
	}
	spec := sbxSpec("/bin/true")
	spec.ReadWrite = []string{rw, inTmp}
	spec.Net = NetHost
	d := Describe(spec)
	text := strings.Join(d.Landlock, "\n")
	t.Log("\n" + text)
	if len(d.Problems) > 0 {
		t.Fatalf("Describe: %v", d.Problems)
	}
	abi := llKernelABI(t)
	wants := []string{fmt.Sprintf("ABI %d", abi)}
	if abi == 0 {
		wants = []string{"none", "open: a server can make FIFOs and sockets in its writable grants", "open: under host networking"}
	}
	if abi >= landlockFSABI {
		wants = append(wants, "FIFOs and sockets can be made in: /dev/shm, "+sandboxHome, "not in /tmp: the writable grant "+inTmp+" lies beneath it")
	}
	if abi >= landlockFSABI && abi < landlockScopeABI {
		wants = append(wants, "open: under host networking, a server can reach the host's abstract unix sockets")
	}
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("Describe's Landlock lines do not say %q", w)
		}
	}
	if abi >= landlockScopeABI && strings.Contains(text, "open:") {
		t.Errorf("with ABI %d nothing stays open, but Describe says so", abi)
	}
}

func TestLandlockDoctorNamesTheABI(t *testing.T) {
	abi := llKernelABI(t)
	c := checkLandlock()
	r := Report{Checks: []Check{c}}
	var out strings.Builder
	r.Write(&out, field.Plain)
	t.Log("\n" + out.String())
	line := ""
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.Contains(l, "  landlock  ") { // the check's line, not a fix naming landlock
			line = l
			break
		}
	}
	want, status := fmt.Sprintf("ABI %d", abi), "ok  "
	switch {
	case abi == 0:
		want, status = "none: no Landlock", "warn"
	case abi < landlockScopeABI:
		status = "warn"
	}
	if !strings.Contains(line, want) || !strings.Contains(line, status+"  landlock") {
		t.Errorf("doctor's landlock line %q does not say %q with status %q", line, want, status)
	}
	if c.Required {
		t.Errorf("a Landlock the kernel can be asked about is not required: %+v", c)
	}
}

// FIFOs, sockets and devices in a writable grant are refused with ABI 2 and
// later; in the sandbox's own tmpfs they work, and renames across
// directories work everywhere. Without Landlock, the FIFO in the grant is
// the documented limit: this checks it is what happens.
func TestLandlockSpecialFilesOnlyInPrivatePlaces(t *testing.T) {
	requireConfinement(t)
	abi := llKernelABI(t)
	rw := llGrantDir(t)
	spec := sbxSpec()
	spec.ReadWrite = []string{rw}
	spec.Tmpfs = []string{"/scratch"}
	refused := []string{"mkfifo:" + rw + "/fifo", "bind:" + rw + "/sock"}
	allowed := []string{
		"mkfifo:/tmp/fifo", "bind:/tmp/sock", "mkfifo:" + sandboxHome + "/fifo", "bind:/dev/shm/sock",
		"mkfifo:/scratch/fifo", "rename:/scratch", "rename:" + rw, "rename:/tmp", "rename:" + sandboxHome,
	}
	res := llProbe(t, spec, append(append([]string{}, refused...), allowed...)...)
	t.Logf("ABI %d, uid %d: %v", abi, os.Geteuid(), res)
	for _, op := range allowed {
		if res[op] != "" {
			t.Errorf("%s: %s; want it to work (ABI %d)", op, res[op], abi)
		}
	}
	for _, op := range refused {
		switch {
		case abi >= landlockFSABI && !strings.Contains(res[op], "permission denied"):
			t.Errorf("%s: %q; want permission denied (ABI %d)", op, res[op], abi)
		case abi < landlockFSABI && res[op] != "":
			t.Errorf("%s: %q; without Landlock's filesystem rules (ABI %d) the documented limit is that it works", op, res[op], abi)
		}
	}
	_, err := os.Lstat(filepath.Join(rw, "fifo"))
	switch {
	case abi >= landlockFSABI && err == nil:
		t.Errorf("a FIFO appeared in the host's %s", rw)
	case abi < landlockFSABI:
		t.Logf("no Landlock filesystem rules (ABI %d): the server made a FIFO in its grant, as documented (lstat: %v)", abi, err)
	}
}

// Under host networking, Landlock's scoping (ABI 6) keeps the server from
// the host's abstract unix sockets and from signalling processes outside
// its sandbox (its reaper included), while it still signals its own
// children.
func TestLandlockScopesHostNetworking(t *testing.T) {
	requireConfinement(t)
	abi := llKernelABI(t)
	name := "@mcpsandbox-landlock-" + escapeRandom(t)
	l, err := net.Listen("unix", name)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	sleeper := exec.Command("/bin/sleep", "600") // a host process of the test's own uid
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		sleeper.Process.Kill()
		sleeper.Wait()
	}()
	spec := sbxSpec()
	spec.Net = NetHost
	dial, reaper, host := "dial:"+name, "kill:1", "kill:"+strconv.Itoa(sleeper.Process.Pid)
	res := llProbe(t, spec, dial, reaper, host, "child")
	t.Logf("ABI %d, uid %d: %v", abi, os.Geteuid(), res)

	if res["child"] != "" {
		t.Errorf("the server could not signal its own child: %s", res["child"])
	}
	if res[host] == "" {
		t.Errorf("the server could signal the host's sleep (pid %d)", sleeper.Process.Pid)
	}
	if err := sleeper.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the host's sleep is gone: %v", err)
	}
	if abi < landlockScopeABI {
		// The documented limit, and the log line run writes about it.
		if res[dial] != "" {
			t.Errorf("without scoping (ABI %d) the server should reach the host's abstract socket, as documented: %s", abi, res[dial])
		}
		t.Skipf("Landlock ABI %d here: scoping needs ABI %d (Linux 6.12+); the abstract socket was reachable, as documented", abi, landlockScopeABI)
	}
	if !strings.Contains(res[dial], "operation not permitted") {
		t.Errorf("connect to the host's abstract socket %s: %q, want operation not permitted", name, res[dial])
	}
	escapeNoConnection(t, "abstract unix", l)
	if !strings.Contains(res[reaper], "operation not permitted") {
		t.Errorf("signal to the sandbox's reaper (outside the Landlock domain): %q, want operation not permitted", res[reaper])
	}
}

// llPreforkRoleEnv makes the test binary, started as `<bin> run ...` so
// that zygote.c pre-forks an init stage, run the Landlock probe confined
// with the grant the variable names and print what it found as JSON.
const llPreforkRoleEnv = "MCPSANDBOX_LL_PREFORK"

type llPreforkResult struct {
	Preforked bool
	Res       map[string]string
	Err       string
}

func init() {
	if rw := os.Getenv(llPreforkRoleEnv); rw != "" && len(os.Args) > 1 && os.Args[1] == "run" {
		os.Exit(llPreforkRole(rw))
	}
}

func llPreforkRole(rw string) int {
	var r llPreforkResult
	spec := sbxSpec(os.Args[0])
	spec.ReadWrite = []string{rw}
	spec.Env = []string{llProbeEnv + "=mkfifo:" + rw + "/fifo|mkfifo:/tmp/fifo|rename:" + rw}
	p, err := Start(spec, slog.New(slog.DiscardHandler))
	if err != nil {
		r.Err = err.Error()
	} else {
		r.Preforked = p.(*confinedProcess).preforked
		p.Stdin().Close()
		out, errOut := sbxCollect(p)()
		if ex := p.Exit(); ex.Failed() {
			r.Err = ex.String() + ": " + errOut
		} else if err := json.Unmarshal([]byte(out), &r.Res); err != nil {
			r.Err = fmt.Sprintf("probe output %q: %v", out, err)
		}
		p.Close()
	}
	json.NewEncoder(os.Stdout).Encode(r)
	return 0
}

// The pre-forked init stage takes the ruleset as its sixth descriptor and
// applies it as the re-exec'd one does.
func TestLandlockPreforkedInitStage(t *testing.T) {
	requireConfinement(t)
	if cgroups.Mode() == cgroups.Unified {
		t.Skip("no init stage is pre-forked on cgroup v2: it must start inside its cgroup (CLONE_INTO_CGROUP)")
	}
	abi := llKernelABI(t)
	if abi < landlockFSABI {
		t.Skipf("Landlock ABI %d here: no ruleset to hand over (filesystem rules need ABI %d)", abi, landlockFSABI)
	}
	rw := llGrantDir(t)
	cmd := exec.Command(os.Args[0], "run", "--", "server")
	cmd.Env = append(os.Environ(), llPreforkRoleEnv+"="+rw)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("role: %v\n%s", err, out)
	}
	var r llPreforkResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("role output %q: %v", out, err)
	}
	if r.Err != "" || !r.Preforked {
		t.Fatalf("pre-forked %v: %s", r.Preforked, r.Err)
	}
	t.Logf("ABI %d: %v", abi, r.Res)
	if got := r.Res["mkfifo:"+rw+"/fifo"]; !strings.Contains(got, "permission denied") {
		t.Errorf("mkfifo in the grant: %q, want permission denied", got)
	}
	for _, op := range []string{"mkfifo:/tmp/fifo", "rename:" + rw} {
		if r.Res[op] != "" {
			t.Errorf("%s: %s", op, r.Res[op])
		}
	}
}

func TestLandlockNetHostWarningSaysWhatStaysOpen(t *testing.T) {
	for _, c := range []struct {
		abi  int
		root bool
		want []string
	}{
		{0, true, []string{"this kernel has no Landlock", "abstract unix sockets", "ABI 6, Linux 6.12"}},
		{2, false, []string{"Landlock ABI 2", "abstract unix sockets", "signals to host processes of your uid"}},
	} {
		msg := netHostUnscopedMessage(c.abi, c.root)
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("ABI %d, root %v: %q does not say %q", c.abi, c.root, msg, w)
			}
		}
		if c.root && strings.Contains(msg, "signals") {
			t.Errorf("as root the server's uid is its own, yet the warning names signals: %q", msg)
		}
	}
}

func TestLandlockFailureIsDiagnosed(t *testing.T) {
	err := landlockFailure("landlock_create_ruleset", unix.EPERM)
	for _, w := range []string{"Landlock", "landlock_create_ruleset", "operation not permitted", "allow them"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q does not say %q", err, w)
		}
	}
}

// The Landlock tests again as an ordinary user: the server keeps the
// user's uid in a user namespace, so only Landlock keeps it from signalling
// its reaper, and the host's sleep is the user's own.
func TestLandlockUnprivilegedSupervisor(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("this is the unprivileged run itself, or there is no root to prepare it")
	}
	sbxRunUnprivileged(t, "^TestLandlock", "TestLandlockSpecialFilesOnlyInPrivatePlaces")
}

// The lower tiers, on this kernel: the sandbox uses no more of Landlock
// than an older kernel's ABI offers (hostLandlock answering that ABI), so
// what stays open there is checked here too, with the one log line run
// writes about host networking.
func TestLandlockAsOnOlderKernels(t *testing.T) {
	requireConfinement(t)
	if have := llKernelABI(t); have < landlockScopeABI {
		t.Skipf("Landlock ABI %d here: the tiers above it cannot be shown", have)
	}
	saved := hostLandlock
	defer func() { hostLandlock = saved }()
	for _, abi := range []int{0, 1, 2, 5, 6} {
		t.Run("ABI"+strconv.Itoa(abi), func(t *testing.T) {
			hostLandlock = func() landlockSupport { return landlockSupport{ABI: abi} }
			netHostWarned = sync.Once{}
			name := "@mcpsandbox-landlock-" + escapeRandom(t)
			l, err := net.Listen("unix", name)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			rw := llGrantDir(t)
			spec := sbxSpec()
			spec.ReadWrite = []string{rw}
			spec.Net = NetHost
			logs := testenv.NewLogCapture(t)
			fifo, dial := "mkfifo:"+rw+"/fifo", "dial:"+name
			res := llProbeLogged(t, spec, slog.New(slog.NewTextHandler(logs, nil)), fifo, dial, "mkfifo:/tmp/fifo", "rename:"+rw)
			t.Logf("as ABI %d: %v", abi, res)
			for _, op := range []string{"mkfifo:/tmp/fifo", "rename:" + rw} {
				if res[op] != "" {
					t.Errorf("%s: %s", op, res[op])
				}
			}
			if fsRules := abi >= landlockFSABI; fsRules != strings.Contains(res[fifo], "permission denied") {
				t.Errorf("mkfifo in the grant: %q (filesystem rules: %v)", res[fifo], fsRules)
			}
			scoped := abi >= landlockScopeABI
			if scoped == (res[dial] == "") {
				t.Errorf("connect to the host's abstract socket: %q (scoped: %v)", res[dial], scoped)
			}
			if warned := logs.Contains("NOT CONFINED under host networking"); warned == scoped {
				t.Errorf("warned %v with scoping %v", warned, scoped)
			}
		})
	}
}
