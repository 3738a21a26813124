package sandbox

import (
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/containerd/cgroups/v3"

	"github.com/mcpsandbox/mcpsandbox/sandbox/internal/initstage"
)

// sbxZygoteRoleEnv makes the test binary, started as `<bin> run ...` so that
// initstage's zygote.c pre-forks an init stage, start one confined shell and print what
// it saw as JSON.
const sbxZygoteRoleEnv = "MCPSANDBOX_SBX_ZYGOTE"

// A role hook in init: the supervisor role must start before TestMain.
func init() {
	if os.Getenv(sbxZygoteRoleEnv) != "" && len(os.Args) > 1 && os.Args[1] == "run" {
		os.Exit(sbxZygoteRole())
	}
}

// zygoteRoleResult is what the pre-forked supervisor role saw.
type zygoteRoleResult struct {
	Pending, Preforked bool
	Out, Err, Exit     string
}

const zygoteProbeScript = `echo "cmdline=$(tr '\0' ' ' </proc/1/cmdline)"
echo "environ=$(tr '\0' ' ' </proc/1/environ 2>&1)"
echo "uid=$(id -u)"
grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status | tr -d ' \t'
echo "fds=$(ls /proc/self/fd | tr '\n' ' ')"
echo "mounts=$(` + mountTableCmd + `)"
echo "kernelargs=$(cat /proc/cmdline)"
echo "bootid=$(cat /proc/sys/kernel/random/boot_id)"
echo "loadavg=$(cat /proc/loadavg)"`

// mountTableCmd prints the sandbox's mount table without what differs
// between any two sandboxes (mount ids, device numbers), one mount a field.
const mountTableCmd = `cut -d' ' -f4- /proc/self/mountinfo | tr '\n' '|'`

func sbxZygoteRole() int {
	return runZygoteRole(sbxSpec("/bin/sh", "-c", zygoteProbeScript), zygoteRoleResult{Pending: initstage.ZygotePending()})
}

// runZygoteRole starts spec in the supervisor role, runs it to its end with
// no input, and prints what it saw, res completed, as JSON for the test.
func runZygoteRole(spec Spec, res zygoteRoleResult) int {
	p, err := Start(spec, slog.New(slog.DiscardHandler))
	if err != nil {
		res.Err = err.Error()
	} else {
		res.Preforked = p.(*confinedProcess).preforked
		p.Stdin().Close()
		res.Out, res.Err = sbxCollect(p)()
		res.Exit = p.Exit().String()
		p.Close()
	}
	json.NewEncoder(os.Stdout).Encode(res)
	return 0
}

// The init stage pre-forked at `mcpsandbox run`'s start is adopted by the
// first sandbox and confines it like a re-exec'd one: PID 1 shows none of
// the supervisor's command line or environment, and the server holds no
// privilege and no descriptor of the supervisor's.
func TestConfinedPreforkedInitStage(t *testing.T) {
	requireConfinement(t)
	if cgroups.Mode() == cgroups.Unified {
		t.Skip("no init stage is pre-forked on cgroup v2: it must start inside its cgroup (CLONE_INTO_CGROUP)")
	}
	const argMarker, envMarker = "ZYGOTE_ARG_MARKER=4711", "ZYGOTE_ENV_MARKER=0815"
	cmd := exec.Command(os.Args[0], "run", "--env", argMarker, "--", "server")
	cmd.Env = append(os.Environ(), sbxZygoteRoleEnv+"=1", envMarker)
	// A descriptor the supervisor holds must not reach the sandbox.
	extra, err := os.Open("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	cmd.ExtraFiles = []*os.File{extra}
	res := zygoteRoleOutput(t, cmd)
	if !res.Pending || !res.Preforked {
		t.Fatalf("pre-forked init stage pending=%v, adopted=%v, want both (%s)", res.Pending, res.Preforked, res.Err)
	}
	if res.Exit != "exited with status 0" {
		t.Fatalf("probe %s\nstdout: %s\nstderr: %s", res.Exit, res.Out, res.Err)
	}
	got := map[string]string{}
	for _, l := range strings.Split(res.Out, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			got[k] = strings.TrimSpace(v)
		} else if k, v, ok := strings.Cut(l, ":"); ok {
			got[k] = v
		}
	}
	if got["cmdline"] != initstage.Arg0 {
		t.Errorf("PID 1's command line is %q, want %q alone", got["cmdline"], initstage.Arg0)
	}
	for _, marker := range []string{argMarker, envMarker, sbxZygoteRoleEnv} {
		if strings.Contains(got["cmdline"]+got["environ"], marker) {
			t.Errorf("PID 1 shows the supervisor's %q: cmdline %q, environ %q", marker, got["cmdline"], got["environ"])
		}
	}
	for k, want := range map[string]string{"CapEff": "0000000000000000", "NoNewPrivs": "1", "Seccomp": "2"} {
		if got[k] != want {
			t.Errorf("server %s is %q, want %s", k, got[k], want)
		}
	}
	if got["uid"] == "" || got["uid"] == "0" {
		t.Errorf("server uid %q", got["uid"])
	}
	// The host's information is masked as in a re-exec'd init stage
	// (TestConfinedHidesHostInformation).
	hostBootID, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if id := got["bootid"]; id == "" || id == strings.TrimSpace(string(hostBootID)) {
		t.Errorf("the server reads the boot id %q, want one of its own (the host's is %s)", id, hostBootID)
	}
	if got["kernelargs"] != "" || got["loadavg"] != "0.00 0.00 0.00 0/0 0" {
		t.Errorf("the server reads the kernel's arguments %q and the load %q, want none and zeros", got["kernelargs"], got["loadavg"])
	}
	// The root the pre-forked init stage built while it waited for its
	// configuration is the one a re-exec'd init stage builds.
	stdout, stderr, ex := sbxRun(t, sbxSpec("/bin/sh", "-c", mountTableCmd))
	if ex.Failed() {
		t.Fatalf("re-exec'd sandbox: %s: %s", ex, stderr)
	}
	// The two are different servers, hence different uids (identity.go),
	// which HOME's tmpfs shows.
	uids := regexp.MustCompile(`uid=\d+,gid=\d+`)
	if have, want := uids.ReplaceAllString(got["mounts"], "uid=U,gid=U"), uids.ReplaceAllString(strings.TrimSpace(stdout), "uid=U,gid=U"); have != want {
		t.Errorf("mount table of the pre-forked init stage's sandbox:\n%s\nof a re-exec'd one:\n%s",
			strings.ReplaceAll(have, "|", "\n"), strings.ReplaceAll(want, "|", "\n"))
	}
	// ls's own directory descriptor is the 4th.
	if fds := strings.Fields(got["fds"]); len(fds) != 4 {
		t.Errorf("server descriptors %v, want 0 1 2 and ls's own\n%s", fds, res.Out)
	}
}

// zygoteRoleOutput runs cmd, a supervisor role, and reads back what it saw.
func zygoteRoleOutput(t *testing.T, cmd *exec.Cmd) zygoteRoleResult {
	t.Helper()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("role: %v\n%s", err, out)
	}
	var res zygoteRoleResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("role output %q: %v", out, err)
	}
	return res
}
