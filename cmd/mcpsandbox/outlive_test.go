package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	containerd "github.com/containerd/cgroups/v3"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// Nothing outlives mcpsandbox, at any moment: prepare, run and the daemon
// are ended with SIGTERM and with SIGKILL at each moment of their start,
// and with a second SIGTERM or a SIGKILL at each moment of the shutdown a
// first SIGTERM starts; afterwards no process of theirs is left (their
// sandboxes' inits included), and no cgroup is frozen. A command that
// exits leaves no cgroup either; one killed by a signal it could not catch
// cannot remove its cgroups, and its next start does. A moment is each
// change the test sees: a line the command logs, a cgroup made or removed,
// a process joining or leaving one, a cgroup frozen or thawed. As root and
// as the ordinary user mcpsandbox-test (or, not as root, the test's user).
func TestNothingOutlivesMcpsandbox(t *testing.T) {
	requireConfinement(t)
	if testing.Short() {
		t.Skip("starts a hundred sandboxes")
	}
	type runner struct {
		name     string
		uid, gid int
	}
	var runners []runner
	switch {
	case os.Geteuid() == 0:
		uid, gid := outliveUser(t)
		runners = []runner{{"root", 0, 0}, {"mcpsandbox-test", uid, gid}}
	case containerd.Mode() == containerd.Unified:
		runners = []runner{{"user", os.Geteuid(), os.Getegid()}}
	default:
		t.Skip("an ordinary user's cgroup v1 hierarchies are delegated by root: run it as root, which tests as mcpsandbox-test too")
	}
	for _, u := range runners {
		t.Run(u.name, func(t *testing.T) {
			r := newOutliveRig(t, u.uid, u.gid)
			for _, c := range r.commands(t) {
				t.Run(c.name, func(t *testing.T) { r.everyMoment(t, c) })
			}
		})
	}
}

// outliveCommand is a command line to end, and what it says once its
// sandbox runs.
type outliveCommand struct {
	name   string
	server string // the server's name, which its cgroup's bears
	args   []string
	log    string // its log file, when it logs to one
	ready  string
}

func (r *outliveRig) commands(t *testing.T) []outliveCommand {
	server := filepath.Join(r.dir, "bin", "server")
	config := filepath.Join(r.dir, "daemon.json")
	policy := filepath.Join(r.dir, "bin", "policy.yaml")
	entry := fmt.Sprintf(`{"mcpServers": {"outlive": {"command": %q, "policy": %q, "prestart": 1}}}`, server, policy)
	if err := os.WriteFile(config, []byte(entry), 0o644); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(r.dir, "daemon.log")
	return []outliveCommand{
		{name: "prepare", server: "outlive-hang", args: []string{"prepare", "--log-level", "debug", "--", "uvx", "outlive-hang"}, ready: "fetching outlive-hang"},
		{name: "run", server: "server", args: []string{"run", "--policy", policy, "--log-level", "debug", "--", server}, ready: "server up"},
		{name: "daemon", server: "outlive", args: []string{"daemon", "--config", config, "--socket-dir", filepath.Join(r.dir, "run"),
			"--log-file", log, "--log-level", "debug"}, log: log, ready: "server up"},
	}
}

// outlivePlan is when to signal a command: first at the at-th moment of its
// start or once its sandbox runs, whichever comes first, then, if second is set, second at the
// at2-th moment after the first.
type outlivePlan struct {
	first  syscall.Signal
	at     int
	second syscall.Signal
	at2    int
}

func (pl outlivePlan) String() string {
	s := fmt.Sprintf("%v at moment %d of the start", pl.first, pl.at)
	if pl.at == 0 {
		s = fmt.Sprintf("%v once the sandbox ran", pl.first)
	}
	if pl.second != 0 {
		s += fmt.Sprintf(", %v at moment %d of the shutdown", pl.second, pl.at2)
	}
	return s
}

// everyMoment counts the moments of c's start and shutdown (SIGTERM once
// its sandbox runs), then ends it at each.
func (r *outliveRig) everyMoment(t *testing.T, c outliveCommand) {
	r.sawSandbox = false
	starting, stopping := r.scenario(t, c, outlivePlan{first: syscall.SIGTERM})
	if !r.sawSandbox {
		t.Fatalf("%s ran its sandbox, but no cgroup of it showed beneath %v, where this test looks", c.name, r.homes)
	}
	t.Logf("%s: %d moments in the start, %d in the shutdown", c.name, starting, stopping)
	for _, at := range outliveMoments(starting) {
		r.scenario(t, c, outlivePlan{first: syscall.SIGKILL, at: at})
		r.scenario(t, c, outlivePlan{first: syscall.SIGTERM, at: at})
	}
	for _, at := range outliveMoments(stopping) {
		r.scenario(t, c, outlivePlan{first: syscall.SIGTERM, second: syscall.SIGTERM, at2: at})
		r.scenario(t, c, outlivePlan{first: syscall.SIGTERM, second: syscall.SIGKILL, at2: at})
	}
}

// outliveMoments is 1..n, or, past a bound, that many spread over it, the
// first and the last included: fewer under emulation (the guest tier).
func outliveMoments(n int) []int {
	most := 16
	if s, _ := strconv.Atoi(os.Getenv(testenv.TimeScaleEnv)); s > 1 {
		most = 5
	}
	if n <= most {
		most = n
	}
	var at []int
	for i := 0; i < most; i++ {
		m := 1
		if most > 1 {
			m = 1 + i*(n-1)/(most-1)
		}
		at = append(at, m)
	}
	return at
}

// scenario runs c to the signals of pl, checks what is left, and returns
// how many moments it saw before the first signal and after it.
func (r *outliveRig) scenario(t *testing.T, c outliveCommand, pl outlivePlan) (before, after int) {
	t.Helper()
	if c.log != "" {
		os.Remove(c.log)
	}
	p := r.start(c.log, c.args...)
	defer p.stdin.Close()
	last := r.progress(p)
	p.release()
	sentFirst, sentSecond := false, pl.second == 0
	deadline := time.Now().Add(testenv.Wait(time.Minute))
	for ended := false; !ended; {
		select {
		case <-p.exited:
			ended = true
		default:
		}
		if now := r.progress(p); now != last {
			last = now
			r.sawSandbox = r.sawSandbox || strings.Contains(now, "/mcpsandbox-"+c.server)
			switch {
			case !sentFirst:
				before++
				// A start that shows fewer moments this time is signalled
				// at its last.
				if before == pl.at || strings.Contains(p.said(), c.ready) {
					p.cmd.Process.Signal(pl.first)
					sentFirst = true
				}
			default:
				after++
				if !sentSecond && after == pl.at2 {
					p.cmd.Process.Signal(pl.second)
					sentSecond = true
				}
			}
		}
		if !ended && time.Now().After(deadline) {
			p.cmd.Process.Kill()
			<-p.exited
			t.Errorf("%s, %v: it did not end within %v; it said:\n%s", c.name, pl, testenv.Wait(time.Minute), p.said())
			break
		}
		// Polling the kernel's view: a frozen cgroup is seen within this.
		time.Sleep(50 * time.Microsecond)
	}
	// Killed by a signal it could not catch, it could not remove its
	// cgroups: its next start must.
	killed := p.cmd.ProcessState.Sys().(syscall.WaitStatus).Signaled()
	if left := r.left(killed); len(left) > 0 {
		t.Errorf("%s, %v (it ended: %v): left behind:\n  %s\nit said:\n%s", c.name, pl, p.cmd.ProcessState, strings.Join(left, "\n  "), p.said())
		r.forceClean()
		return before, after
	}
	if killed {
		r.nextStartSweeps(t, c.name, pl)
	}
	return before, after
}

// nextStartSweeps runs a prepare that succeeds at once, and checks that
// it removed the cgroups a killed command left.
func (r *outliveRig) nextStartSweeps(t *testing.T, name string, pl outlivePlan) {
	t.Helper()
	stale := r.cgroups()
	p := r.start("", "prepare", "--", "uvx", "outlive-done")
	p.release()
	p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(testenv.Wait(time.Minute)):
		p.cmd.Process.Kill()
		<-p.exited
	}
	if !p.cmd.ProcessState.Success() {
		t.Errorf("after %s, %v: the next prepare failed (%v):\n%s", name, pl, p.cmd.ProcessState, p.said())
	}
	if left := r.left(false); len(left) > 0 {
		t.Errorf("after %s, %v: the next start did not clean up (left before it: %v):\n  %s", name, pl, stale, strings.Join(left, "\n  "))
		r.forceClean()
	}
}
