package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/containerd/cgroups/v3"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// guestEnv marks the systemd + cgroup v2 test guest (scripts/guest): the
// launch tests start scopes and services and run bombs, which only a
// throwaway machine should get. The guest (1 GiB, its own kernel) is also
// the outer limit around the bombs, beside the sandbox's own.
const guestEnv = "MCPSANDBOX_GUEST"

func requireGuest(t *testing.T) {
	t.Helper()
	if os.Getenv(guestEnv) != "1" {
		t.Skip("runs in the systemd + cgroup v2 guest tier (scripts/test-guest.sh)")
	}
	if cgroups.Mode() != cgroups.Unified {
		t.Fatal("the guest tier needs pure cgroup v2")
	}
	if _, err := os.Stat("/run/systemd/system"); err != nil {
		t.Fatal("the guest tier needs systemd as init")
	}
}

// hostEnv is what hosts built on the TypeScript SDK pass a server: these
// six variables and nothing else (no XDG_RUNTIME_DIR, no D-Bus address).
func hostEnv() []string {
	var env []string
	for _, k := range []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"} {
		env = append(env, k+"="+os.Getenv(k))
	}
	return env
}

// launchWay is one way mcpsandbox gets started on a systemd machine.
type launchWay struct {
	name     string
	rootOnly bool
	hostWrap []string // runs the host
	supWrap  []string // runs mcpsandbox, inside the host
	sibling  bool     // the host's cgroup holds another process of the host's
	extraEnv []string // beside hostEnv, for mcpsandbox
	// what must come of it
	ownScope bool   // mcpsandbox asks systemd for a scope of its own
	inside   string // else: the cgroup mcpsandbox must end up beneath
}

func launchWays(t *testing.T) []launchWay {
	user := ""
	if os.Geteuid() != 0 {
		user = "--user"
	}
	scope := func(props ...string) []string {
		args := []string{"systemd-run", "--scope", "-q"}
		if user != "" {
			args = append(args, user)
		}
		return append(append(args, props...), "--")
	}
	return []launchWay{
		{name: "host_in_login_session_or_shared_service", ownScope: true},
		{name: "host_in_delegated_scope_with_mcpsandbox", hostWrap: scope("-p", "Delegate=yes"), ownScope: true},
		{name: "desktop_host_app_scope", hostWrap: scope(), sibling: true, ownScope: true},
		// systemd-run --user itself needs XDG_RUNTIME_DIR to find the manager.
		{name: "mcpsandbox_alone_in_delegated_scope", supWrap: scope("-p", "Delegate=yes"), inside: `/run-[^/]+\.scope$`,
			extraEnv: []string{"XDG_RUNTIME_DIR=" + os.Getenv("XDG_RUNTIME_DIR")}},
		{name: "root_delegated_service_shared_with_host", rootOnly: true, sibling: true, ownScope: true,
			hostWrap: []string{"systemd-run", "-q", "--pipe", "--wait", "-p", "Delegate=yes", "--setenv=" + hostSpecEnv + "="}},
	}
}

// TestSystemdLaunch starts `mcpsandbox run` each way a host or a user
// starts it on a systemd + cgroup v2 machine, with the environment a
// TypeScript-SDK host passes. Each time the server must start confined with
// its limits visible from inside, a memory bomb and a fork bomb must end as
// the restart reason, and a SIGKILL of mcpsandbox must leave no process and
// no scope behind.
func TestSystemdLaunch(t *testing.T) {
	requireGuest(t)
	hostile := testenv.BuildHostile(t)
	for _, way := range launchWays(t) {
		t.Run(way.name, func(t *testing.T) {
			if way.rootOnly && os.Geteuid() != 0 {
				t.Skip("a system service needs root")
			}
			cmd := append(append([]string{}, way.supWrap...), self(t), asCLI, "run",
				"--memory", "192MiB", "--pids", "48", "--restart-backoff", "10ms..1s", "--", hostile)
			rep := runHost(t, way.hostWrap, hostSpec{Command: cmd, Env: append(hostEnv(), way.extraEnv...), Sibling: way.sibling, Bombs: true})
			if rep.ConnectError != "" {
				t.Fatalf("the host could not start a session: %s", rep.ConnectError)
			}
			checkPlacement(t, way, rep)
			checkLimits(t, rep, "201326592", "48")
			checkBombs(t, rep)
			checkNothingLeft(t, rep, hostile)
		})
	}
}

// runHost starts the host role, wrapped, and returns its report.
func runHost(t *testing.T, wrap []string, spec hostSpec) hostReport {
	t.Helper()
	specJSON, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{}, wrap...)
	if n := len(args); n > 0 && strings.HasPrefix(args[n-1], "--setenv=") {
		args[n-1] += string(specJSON) // a service does not inherit the environment
	}
	args = append(args, self(t), asHost)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), hostSpecEnv+"="+string(specJSON))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	t.Logf("host (%s) stderr:\n%s", strings.Join(wrap, " "), stderr.String())
	var rep hostReport
	if jerr := json.Unmarshal(stdout.Bytes(), &rep); jerr != nil {
		t.Fatalf("host role: %v; %v; stdout %q", err, jerr, stdout.String())
	}
	if err != nil {
		t.Fatalf("host role failed: %v (report %+v)", err, rep)
	}
	t.Logf("host in %s; mcpsandbox (pid %d) in %s", rep.HostCgroup, rep.SupervisorPid, rep.SupervisorCgroup)
	return rep
}

func checkPlacement(t *testing.T, way launchWay, rep hostReport) {
	t.Helper()
	dir := filepath.Dir(rep.SupervisorCgroup)
	if filepath.Base(rep.SupervisorCgroup) != "mcpsandbox-supervisor" {
		t.Errorf("mcpsandbox sits in %s, want its leaf mcpsandbox-supervisor", rep.SupervisorCgroup)
	}
	if way.ownScope {
		want := fmt.Sprintf("mcpsandbox-hostile-%d.scope", rep.SupervisorPid)
		if filepath.Base(dir) != want {
			t.Errorf("mcpsandbox's cgroup %s is not the scope %s it should have asked systemd for", rep.SupervisorCgroup, want)
		}
		if dir == rep.HostCgroup || strings.HasPrefix(rep.HostCgroup, dir+"/") {
			t.Errorf("mcpsandbox's scope %s holds the host (%s) too", dir, rep.HostCgroup)
		}
		slice := "/system.slice/"
		if os.Geteuid() != 0 {
			slice = fmt.Sprintf("/user@%d.service/", os.Geteuid())
		}
		if !strings.Contains(dir, slice) {
			t.Errorf("the scope %s is not under %s: the wrong manager made it", dir, slice)
		}
		return
	}
	if !regexp.MustCompile(way.inside).MatchString(dir) {
		t.Errorf("mcpsandbox's cgroup %s, want it beneath one matching %s (no scope of its own)", rep.SupervisorCgroup, way.inside)
	}
}

func checkLimits(t *testing.T, rep hostReport, memory, pids string) {
	t.Helper()
	l := rep.Limits
	if l["memory_max"] != memory || l["pids_max"] != pids {
		t.Errorf("inside: memory.max %v, pids.max %v; want %s and %s", l["memory_max"], l["pids_max"], memory, pids)
	}
	if l["seccomp"] != "2" || l["no_new_privs"] != "1" {
		t.Errorf("inside: seccomp %v, no_new_privs %v; want a filter and 1", l["seccomp"], l["no_new_privs"])
	}
	if l["cgroup"] != "0::/" {
		t.Errorf("inside, /proc/self/cgroup is %q; want its own cgroup namespace root", l["cgroup"])
	}
}

func checkBombs(t *testing.T, rep hostReport) {
	t.Helper()
	for bomb, want := range map[string]string{"membomb": "out of memory", "forkbomb": "pids limit"} {
		r := rep.Bombs[bomb]
		if r.Code != supervisor.CodeServerCrashed || !strings.Contains(r.Reason, want) {
			t.Errorf("%s: the host got code %d reason %q; want %d and a reason saying %q", bomb, r.Code, r.Reason, supervisor.CodeServerCrashed, want)
		}
		if r.NextError != "" {
			t.Errorf("%s: the call after the restart failed: %s", bomb, r.NextError)
		}
	}
}

// checkNothingLeft waits until mcpsandbox's cgroup is gone (systemd
// removes a scope's tree once it is empty) and no process of the server
// remains.
func checkNothingLeft(t *testing.T, rep hostReport, hostile string) {
	t.Helper()
	scopeDir := filepath.Join("/sys/fs/cgroup", filepath.Dir(rep.SupervisorCgroup))
	unit := filepath.Base(scopeDir)
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := os.Stat(scopeDir)
		left := testenv.ProcessesRunning(hostile)
		units := listUnits(t, unit)
		if os.IsNotExist(err) && len(left) == 0 && units == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after SIGKILL of mcpsandbox: cgroup %s stat %v, server processes %v, units %q", scopeDir, err, left, units)
		}
		time.Sleep(50 * time.Millisecond) // polling systemd's and the kernel's clean-up
	}
}

// listUnits lists loaded units named name, of this user's manager.
func listUnits(t *testing.T, name string) string {
	args := []string{"list-units", "--all", "--plain", "--no-legend", name}
	if os.Geteuid() != 0 {
		args = append([]string{"--user"}, args...)
	}
	out, err := exec.Command("systemctl", args...).Output()
	if err != nil {
		t.Fatalf("systemctl %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// TestSystemdDoctor: doctor, started as a host starts servers, says what
// run will do: which manager it asks for a scope, that it answers, and
// which controllers the scope offers.
func TestSystemdDoctor(t *testing.T) {
	requireGuest(t)
	cmd := exec.Command(self(t), asCLI, "doctor")
	cmd.Env = hostEnv()
	out, err := cmd.CombinedOutput()
	t.Logf("doctor:\n%s", out)
	if err != nil {
		t.Fatalf("doctor: %v", err)
	}
	manager, socket := "system manager", "/run/systemd/private"
	if os.Geteuid() != 0 {
		manager, socket = "user manager", fmt.Sprintf("/run/user/%d/systemd/private", os.Geteuid())
	}
	for _, want := range []string{
		"ok    systemd manager        the systemd " + manager + " answers at " + socket,
		"ok    cgroup of its own",
		"so run asks the systemd " + manager + " at unix:path=" + socket + " for a scope with Delegate=yes (doctor got mcpsandbox-doctor-",
		"it offers the controllers",
		"The default confinement can be enforced on this host.",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("doctor does not say %q", want)
		}
	}
	if !regexp.MustCompile(`controllers [a-z ]*\bmemory\b[a-z ]*\bpids\b`).Match(out) {
		t.Error("doctor does not list memory and pids among the scope's controllers")
	}
}
