package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	containerd "github.com/containerd/cgroups/v3"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/sandbox/cgroups"
)

// An outliveRig starts mcpsandbox commands as one user in cgroups the test
// made for them (outliveHomes), so that everything they start, the
// sandboxes' inits and servers included, is found there afterwards.
type outliveRig struct {
	t     *testing.T
	uid   int
	gid   int
	homes []string // the commands' own cgroups: one per v1 hierarchy, or the v2 one
	// entries are the cgroups a command starts in: the homes on v1, on v2
	// the supervisor's leaf beneath its home, where mcpsandbox would move
	// (a cgroup that passes controllers on takes no process).
	entries []string
	bin     string // the mcpsandbox binary (this test binary, readable by uid)
	dir     string // fixtures, state, sockets and logs, owned by uid
	env     []string
	// sawSandbox: a sandbox's cgroup showed beneath the homes.
	sawSandbox bool
}

// newOutliveRig sets up a rig for uid (the test's own when it is not root).
func newOutliveRig(t *testing.T, uid, gid int) *outliveRig {
	t.Helper()
	r := &outliveRig{t: t, uid: uid, gid: gid, bin: testenv.SelfForOthers(t)}
	r.dir = testenv.SharedDir(t, "mcpsandbox-outlive-")
	for _, d := range []string{"bin", "state", "home", "run"} {
		if err := os.Mkdir(filepath.Join(r.dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeOutliveFixtures(t, filepath.Join(r.dir, "bin"))
	for _, d := range []string{r.dir, filepath.Join(r.dir, "state"), filepath.Join(r.dir, "home"), filepath.Join(r.dir, "run")} {
		if err := os.Chown(d, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(filepath.Join(r.dir, "run"), 0o700)
	r.env = []string{
		"PATH=" + filepath.Join(r.dir, "bin") + ":" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(r.dir, "home"),
		"TMPDIR=" + os.TempDir(),
		"MCPSANDBOX_STATE_DIR=" + filepath.Join(r.dir, "state"),
	}
	r.homes, r.entries = outliveHomes(t, uid, gid)
	t.Cleanup(r.forceClean) // before the homes are removed
	return r
}

// writeOutliveFixtures writes the stand-ins the commands run: a uvx that
// for the package outlive-hang starts two lingering children, says so and
// waits (a fetch that hangs), and for any other succeeds at once; a
// server that starts a lingering child, says so and echoes its input; and
// the policy run and the daemon give it.
func writeOutliveFixtures(t *testing.T, bin string) {
	t.Helper()
	files := map[string]string{
		"uvx": "#!/bin/sh\nif [ \"$1\" = linger ]; then while :; do sleep 1000; done; fi\n" +
			"case \"$2\" in\noutlive-hang) \"$0\" linger & \"$0\" linger & echo \"fetching $2\" >&2; wait ;;\n*) exit 0 ;;\nesac\n",
		// Its shutdown takes a while: it outlasts its stdin's end, notes
		// SIGTERM and lives on until SIGKILL.
		"server": "#!/bin/sh\n\"$(dirname \"$0\")/uvx\" linger &\ntrap 'echo server got SIGTERM >&2' TERM\n" +
			"echo 'server up' >&2\ncat\necho 'server saw its stdin end' >&2\nwhile :; do sleep 1000 & wait $!; done\n",
		// A grace of its own: the shutdown goes through every step quickly.
		"policy.yaml": "restart:\n  grace: 300ms\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// outliveHomes makes the cgroups the commands start in, beneath the test's
// own under an outer limit, handed to uid as Delegate=yes would, and
// returns them and where a command is moved in (see entries).
func outliveHomes(t *testing.T, uid, gid int) (homes, entries []string) {
	t.Helper()
	testenv.OuterLimit(t, 2<<30, 2048)
	name := fmt.Sprintf("mcpsandbox-test-ends-%d-u%d", os.Getpid(), uid)
	if containerd.Mode() != containerd.Unified {
		homes = testenv.DelegateV1Cgroups(t, name, uid)
		return homes, homes
	}
	// Beside the test's leaf, beneath the cgroup whose controllers
	// OuterLimit enabled.
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	own := strings.TrimPrefix(strings.TrimSpace(string(data)), "0::")
	home := filepath.Join(cgroups.Mount, filepath.Dir(own), name)
	leaf := filepath.Join(home, cgroups.SupervisorLeaf)
	for _, dir := range []string{home, leaf} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"", "cgroup.procs", "cgroup.subtree_control", "cgroup.threads"} {
			if err := os.Chown(filepath.Join(dir, f), uid, gid); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Cleanup(func() { testenv.RemoveCgroupTree(t, home) })
	return []string{home}, []string{leaf}
}

// outliveUser is the ordinary user the root run also tests as.
func outliveUser(t *testing.T) (uid, gid int) {
	t.Helper()
	u, err := user.Lookup("mcpsandbox-test")
	if err != nil {
		t.Fatalf("the ordinary user mcpsandbox-test is missing (%v): run scripts/test-setup.sh", err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid
}

// outliveProc is one started command.
type outliveProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	log    string // its --log-file, or ""
	exited chan struct{}

	mu     sync.Mutex
	output strings.Builder // its stderr
	lines  int
}

// start starts `mcpsandbox ARGS` as the rig's user inside its homes: a
// shell waits for a line (release) while the test moves it in, then execs it.
func (r *outliveRig) start(log string, args ...string) *outliveProc {
	t := r.t
	t.Helper()
	argv := append([]string{"/bin/sh", "-c", `read _ && exec "$0" "$@"`, r.bin, asCLI}, args...)
	p := &outliveProc{cmd: exec.Command(argv[0], argv[1:]...), log: log, exited: make(chan struct{})}
	p.cmd.Dir = r.dir
	p.cmd.Env = r.env
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if r.uid != os.Geteuid() {
		p.cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(r.uid), Gid: uint32(r.gid), Groups: []uint32{}}
	}
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s := bufio.NewScanner(stderr)
		for s.Scan() {
			p.mu.Lock()
			p.output.WriteString(s.Text() + "\n")
			p.lines++
			p.mu.Unlock()
		}
		p.cmd.Wait()
		close(p.exited)
	}()
	for _, home := range r.entries {
		if err := os.WriteFile(filepath.Join(home, "cgroup.procs"), []byte(strconv.Itoa(p.cmd.Process.Pid)), 0); err != nil {
			p.cmd.Process.Kill()
			<-p.exited
			t.Fatalf("moving mcpsandbox into %s: %v", home, err)
		}
	}
	return p
}

// release lets the command, started by start, run.
func (p *outliveProc) release() { io.WriteString(p.stdin, "go\n") }

// said reports what the command said so far, on stderr and in its log.
func (p *outliveProc) said() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.output.String()
	if p.log != "" {
		data, _ := os.ReadFile(p.log)
		s += string(data)
	}
	return s
}

// progress is what the test sees of the command: its output so far and
// the state of every cgroup beneath the homes. Each change is an event,
// a moment at which a test may signal it.
func (r *outliveRig) progress(p *outliveProc) string {
	p.mu.Lock()
	lines := p.lines
	p.mu.Unlock()
	var logSize int64
	if st, err := os.Stat(p.log); err == nil {
		logSize = st.Size()
	}
	b := &strings.Builder{}
	fmt.Fprintf(b, "%d %d\n", lines, logSize)
	// mcpsandbox's threads and children: each one started or ended is a moment.
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", p.cmd.Process.Pid))
	for _, task := range tasks {
		children, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", p.cmd.Process.Pid, task.Name()))
		fmt.Fprintf(b, "%s:%s\n", task.Name(), children)
	}
	for _, c := range r.cgroups() {
		procs, _ := readCgroupProcs(c)
		fmt.Fprintf(b, "%s %v %s\n", c, procs, frozenState(c))
	}
	return b.String()
}

// cgroups lists every cgroup beneath the homes, deepest first.
func (r *outliveRig) cgroups() []string {
	var dirs []string
	for _, home := range r.homes {
		filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() && p != home {
				dirs = append(dirs, p)
			}
			return nil
		})
	}
	slices.Reverse(dirs)
	return dirs
}

// frozenState is "FROZEN" or "FREEZING" for a frozen cgroup (v1's freezer,
// v2's cgroup.freeze), else "".
func frozenState(dir string) string {
	if data, err := os.ReadFile(filepath.Join(dir, "freezer.state")); err == nil {
		if s := strings.TrimSpace(string(data)); s != "THAWED" {
			return s
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, "cgroup.freeze")); err == nil && strings.TrimSpace(string(data)) == "1" {
		return "FROZEN"
	}
	return ""
}

func readCgroupProcs(dir string) ([]int, error) {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, err
}

// left describes what is left beneath the homes once the command is gone:
// processes (waited for a while: the kernel kills a sandbox whose
// supervisor died, which takes a moment), frozen cgroups, and, unless
// cgroupsMayStay, cgroups (v2's supervisor leaf may stay, empty). It also
// looks through /proc for processes running the fixtures, wherever they are.
func (r *outliveRig) left(cgroupsMayStay bool) []string {
	deadline := time.Now().Add(testenv.Wait(10 * time.Second))
	var found []string
	for {
		found = found[:0]
		seen := map[string]bool{}
		note := func(pid, where string) {
			if !seen[pid] {
				seen[pid] = true
				cmdline, _ := os.ReadFile("/proc/" + pid + "/cmdline")
				found = append(found, fmt.Sprintf("process %s (%s)%s", pid, strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " ")), where))
			}
		}
		for _, c := range append(r.cgroups(), r.homes...) {
			procs, _ := readCgroupProcs(c)
			for _, pid := range procs {
				note(strconv.Itoa(pid), " in "+c)
			}
		}
		for _, pid := range processesNaming(r.dir) {
			note(pid, "")
		}
		if len(found) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond) // the kernel's killing, not a stand-in for an event
	}
	for _, c := range r.cgroups() {
		if s := frozenState(c); s != "" {
			found = append(found, "cgroup "+c+" is "+s)
		}
		if !cgroupsMayStay && filepath.Base(c) != cgroups.SupervisorLeaf {
			found = append(found, "cgroup "+c)
		}
	}
	return found
}

// forceClean thaws, kills and removes whatever is beneath the homes, so
// that one failed case neither spoils the next nor outlives the test.
func (r *outliveRig) forceClean() {
	dirs := r.cgroups()
	for _, d := range dirs {
		os.WriteFile(filepath.Join(d, "freezer.state"), []byte("THAWED"), 0)
		os.WriteFile(filepath.Join(d, "cgroup.freeze"), []byte("0"), 0)
	}
	for _, d := range append(dirs, r.homes...) {
		procs, _ := readCgroupProcs(d)
		for _, pid := range procs {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	for _, pid := range processesNaming(r.dir) {
		if n, err := strconv.Atoi(pid); err == nil {
			syscall.Kill(n, syscall.SIGKILL)
		}
	}
	deadline := time.Now().Add(testenv.Wait(10 * time.Second))
	for _, d := range dirs {
		if slices.Contains(r.entries, d) {
			continue // the next command starts there
		}
		for syscall.Rmdir(d) == syscall.EBUSY && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond) // killed processes leave
		}
	}
}
