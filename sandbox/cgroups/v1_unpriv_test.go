package cgroups

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/containerd/cgroups/v3/cgroup1"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// The unprivileged v1 diagnosis, as a user sees it on this host: a server
// cgroup with memory and pids limits needs memory and pids.
const v1DiagLimits = "MCPSANDBOX_CGROUP_LIMITS=33554432 16 0"

var v1DiagNeeded = []string{"memory", "pids"}

func requireV1Controllers(t *testing.T) v1Mounts {
	t.Helper()
	requireV1(t)
	mounts, err := readV1Mounts()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range v1DiagNeeded {
		if mounts[c] == "" {
			t.Skipf("cgroup v1 controller %s is not mounted here", c)
		}
	}
	return mounts
}

// With every controller but one delegated, the diagnosis names that one and
// the directory its mkdir failed on, not the first controller (memory).
func TestCgroupV1UnprivilegedNamesTheControllerThatFailed(t *testing.T) {
	mounts := requireV1Controllers(t)
	own, err := cgroup1.ParseCgroupFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	for _, undelegated := range []string{"pids"} {
		t.Run(undelegated, func(t *testing.T) {
			msg, pid, delegated := v1CreateWithout(t, mounts, undelegated)
			failed := filepath.Join(mounts[undelegated], own[undelegated], fmt.Sprintf("mcpsandbox-role-%d-1", pid))
			root := filepath.Dir(mounts["memory"])
			home := root + "/$c/mcpsandbox-4242"
			for _, want := range []string{
				"ERR cgroups: cannot enforce limits: no permission to create a cgroup beneath " + filepath.Dir(failed) +
					" for the cgroup v1 " + undelegated + " controller (mkdir " + failed + ": permission denied)",
				"needs the cgroup v1 controllers memory, pids delegated to user 4242",
				"as root run `for c in memory pids; do mkdir -p " + home + " && chown -R 4242:4242 " + home + "; done`",
				"run `for c in memory pids; do echo $$ > " + home + "/cgroup.procs; done`",
				"or run mcpsandbox as root",
			} {
				if !strings.Contains(msg, want) {
					t.Errorf("diagnosis lacks %q:\n%s", want, msg)
				}
			}
			if strings.Contains(msg, "beneath "+mounts["memory"]) {
				t.Errorf("diagnosis blames memory, which was delegated:\n%s", msg)
			}
			// The directories made before the failure are gone again.
			for c, dir := range delegated {
				if left, _ := filepath.Glob(filepath.Join(dir, "mcpsandbox-role-*")); len(left) > 0 {
					t.Errorf("the failed attempt left %s cgroups %v", c, left)
				}
			}
			t.Log(msg)
		})
	}
}

// v1CreateWithout runs the "create" role as the unprivileged test uid in
// cgroups delegated to it in every controller but undelegated, and returns
// what it printed, its pid and the delegated directories it ran in.
func v1CreateWithout(t *testing.T, mounts v1Mounts, undelegated string) (string, int, map[string]string) {
	t.Helper()
	return v1CreateWithoutLimits(t, mounts, undelegated, v1DiagLimits)
}

// v1CreateWithoutLimits is v1CreateWithout with the role's limits given.
func v1CreateWithoutLimits(t *testing.T, mounts v1Mounts, undelegated, limits string) (string, int, map[string]string) {
	t.Helper()
	name := fmt.Sprintf("mcpsandbox-v1diag-%d-%s", os.Getpid(), undelegated)
	var out bytes.Buffer
	cmd := helperCmd(t, testenv.SelfForOthers(t), "create", limits, waitEnv+"=1")
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: testenv.UnprivUID, Gid: testenv.UnprivUID}}
	cmd.Stdout, cmd.Stderr = &out, &out
	dirs := testenv.DelegateV1Cgroups(t, name, testenv.UnprivUID)
	p := startBlocked(t, cmd)
	delegated := map[string]string{}
	for _, dir := range dirs {
		c := v1ControllerOf(mounts, dir)
		if c == undelegated {
			continue
		}
		delegated[c] = dir
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(fmt.Sprint(cmd.Process.Pid)), 0); err != nil {
			t.Fatal(err)
		}
	}
	p.release(t)
	if err := p.wait(t); err != nil {
		t.Fatalf("role as uid %d: %v\n%s", testenv.UnprivUID, err, out.String())
	}
	return out.String(), cmd.Process.Pid, delegated
}

func v1ControllerOf(mounts v1Mounts, dir string) string {
	for _, c := range []string{"memory", "pids", "cpu", "freezer"} {
		if m := mounts[c]; m != "" && strings.HasPrefix(dir, m+"/") {
			return c
		}
	}
	return ""
}

// The commands the diagnosis gives work as written: root runs its part,
// the user's shell moves itself, and a server cgroup can then be created.
func TestCgroupV1UnprivilegedFixWorksAsWritten(t *testing.T) {
	mounts := requireV1Controllers(t)
	bin := testenv.SelfForOthers(t)
	msg := v1UnprivCreate(t, bin, "")
	rootCmd, userCmd := v1FixCommands(t, msg)

	for _, c := range v1DiagNeeded {
		dir := filepath.Join(filepath.Dir(mounts[c]), c, "mcpsandbox-4242")
		if _, err := os.Stat(dir); err == nil {
			t.Fatalf("%s exists already; remove it (a run that was cut short?)", dir)
		}
		t.Cleanup(func() { testenv.RemoveCgroupTree(t, dir) })
	}
	if out, err := exec.Command("sh", "-c", rootCmd).CombinedOutput(); err != nil {
		t.Fatalf("the root part %q failed: %v\n%s", rootCmd, err, out)
	}
	out := v1UnprivCreate(t, bin, userCmd+" && cat /proc/self/cgroup && exec")
	if !strings.Contains(out, "\nOK\n") {
		t.Fatalf("after the fix, creating a server cgroup as uid %d still fails:\n%s", testenv.UnprivUID, out)
	}
	for _, c := range v1DiagNeeded {
		if !strings.Contains(out, ":"+c+":/mcpsandbox-4242\n") {
			t.Errorf("the user's part did not move the shell into the delegated %s cgroup:\n%s", c, out)
		}
	}
}

// v1UnprivCreate runs the "create" role as the unprivileged test uid, behind
// the shell command prefix (which ends in exec) when there is one.
func v1UnprivCreate(t *testing.T, bin, prefix string) string {
	t.Helper()
	args := []string{bin, "-test.run=^TestCgroupHelperRole$", "-test.count=1"}
	cmd := exec.Command(args[0], args[1:]...)
	if prefix != "" {
		cmd = exec.Command("sh", "-c", prefix+" "+strings.Join(args, " "))
	}
	cmd.Dir = "/"
	cmd.Env = append(os.Environ(), roleEnv+"=create", v1DiagLimits)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: testenv.UnprivUID, Gid: testenv.UnprivUID}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("role as uid %d: %v\n%s", testenv.UnprivUID, err, out)
	}
	return string(out)
}

// v1FixCommands picks the root and the user command out of a diagnosis.
func v1FixCommands(t *testing.T, msg string) (rootCmd, userCmd string) {
	t.Helper()
	quoted := strings.Split(msg, "`")
	for i := 1; i < len(quoted); i += 2 {
		switch {
		case strings.HasSuffix(quoted[i-1], "as root run "):
			rootCmd = quoted[i]
		case strings.HasSuffix(quoted[i-1], "(or mcpsandbox) run "):
			userCmd = quoted[i]
		}
	}
	if rootCmd == "" || userCmd == "" {
		t.Fatalf("no root and user commands in the diagnosis:\n%s", msg)
	}
	return rootCmd, userCmd
}

// Where controllers are not mounted side by side, the loop goes over the
// directories themselves.
func TestCgroupV1DelegateLoopOverDirectories(t *testing.T) {
	mounts := v1Mounts{"memory": "/a/memory", "pids": "/b/pids"}
	loop, dir := v1DelegateLoop(mounts, []string{"memory", "pids"}, "mcpsandbox-u")
	if loop != "for d in /a/memory/mcpsandbox-u /b/pids/mcpsandbox-u" || dir != "$d" {
		t.Errorf("loop %q over %q", loop, dir)
	}
	mounts["pids"] = "/a/pids"
	loop, dir = v1DelegateLoop(mounts, []string{"memory", "pids"}, "mcpsandbox-u")
	if loop != "for c in memory pids" || dir != "/a/$c/mcpsandbox-u" {
		t.Errorf("loop %q over %q", loop, dir)
	}
}
