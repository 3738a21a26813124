package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kardianos/service"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/packaging"
)

// forceSystemdEnv makes this test binary, as the CLI, see systemd as
// kardianos/service would on a machine booted with it (this one has none as
// PID 1, and the library then picks System V).
const forceSystemdEnv = "MCPSANDBOX_TEST_FORCE_SYSTEMD"

type detectedSystemd struct{ service.System }

func (detectedSystemd) Detect() bool { return true }

func init() {
	if os.Getenv(forceSystemdEnv) != "1" {
		return
	}
	for _, s := range service.AvailableSystems() {
		if s.String() == systemdName {
			service.ChooseSystem(detectedSystemd{s})
			return
		}
	}
	panic("kardianos/service has no " + systemdName)
}

// installScript runs the service's life in a mount namespace of its own,
// with a tmpfs over the directory install writes to, and a systemctl that
// logs what it is asked (no systemd manager runs here to ask). Each step's
// output and status go to files in $OUT.
const installScript = `
mount -t tmpfs tmpfs "$UNITDIR" || exit 99
step() { name=$1; shift; "$SELF" ` + asCLI + ` "$@" >"$OUT/$name.out" 2>&1; echo $? >"$OUT/$name.rc"; }
step install service install $USERFLAG --config "$CFG"
cp "$UNITDIR/mcpsandbox.service" "$OUT/installed.service"
step unit service unit $USERFLAG --config "$CFG"
step status service status $USERFLAG
step doctor doctor
step again service install $USERFLAG --config "$CFG"
step uninstall service uninstall $USERFLAG
ls -A "$UNITDIR" >"$OUT/after.ls"
step status2 service status $USERFLAG
`

func TestServiceInstallWritesTheUnitThatServiceUnitPrints(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: mounts a tmpfs over the unit directory in a mount namespace")
	}
	for _, user := range []bool{false, true} {
		t.Run(map[bool]string{false: "system", true: "user"}[user], func(t *testing.T) {
			dir := t.TempDir()
			home := filepath.Join(dir, "home")
			bin := filepath.Join(dir, "bin")
			out := filepath.Join(dir, "out")
			for _, d := range []string{home, bin, out} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			systemctlLog := filepath.Join(dir, "systemctl.log")
			stub := "#!/bin/sh\necho \"$*\" >>" + systemctlLog + "\n"
			if err := os.WriteFile(filepath.Join(bin, "systemctl"), []byte(stub), 0o755); err != nil {
				t.Fatal(err)
			}
			cfg := filepath.Join(dir, "my servers.json")
			if err := os.WriteFile(cfg, []byte(`{"mcpServers": {}}`), 0o644); err != nil {
				t.Fatal(err)
			}
			unitDir, userFlag := "/etc/systemd/system", ""
			if user {
				unitDir, userFlag = filepath.Join(home, ".config/systemd/user"), "--user"
				if err := os.MkdirAll(unitDir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command("/bin/sh", "-c", installScript)
			cmd.Env = append(os.Environ(), forceSystemdEnv+"=1", "SELF="+self(t), "OUT="+out, "CFG="+cfg,
				"UNITDIR="+unitDir, "USERFLAG="+userFlag, "HOME="+home, "PATH="+bin+":"+os.Getenv("PATH"))
			cmd.SysProcAttr = newMountNamespace()
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("install script: %v\n%s", err, b)
			}
			read := func(name string) string {
				b, err := os.ReadFile(filepath.Join(out, name))
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
			step := func(name, wantRC string, want ...string) string {
				t.Helper()
				text := read(name + ".out")
				if rc := strings.TrimSpace(read(name + ".rc")); rc != wantRC {
					t.Errorf("%s: exit %s, want %s:\n%s", name, rc, wantRC, text)
				}
				for _, w := range want {
					if !strings.Contains(text, w) {
						t.Errorf("%s: no %q in:\n%s", name, w, text)
					}
				}
				return text
			}
			unitPath := filepath.Join(unitDir, packaging.UnitName)
			step("install", "0", "installed "+unitPath)
			installed := read("installed.service")
			if unit := step("unit", "0"); installed != unit {
				t.Errorf("the installed unit differs from `service unit`'s:\ninstalled:\n%s\nservice unit:\n%s", installed, unit)
			}
			if want := packaging.Render(user, self(t), packaging.DaemonArgs(cfg)); installed != want {
				t.Errorf("the installed unit is not the shipped one run by this binary with %s:\n%s", cfg, installed)
			}
			if out := verifyUnit(t, user, installed); out != "" {
				t.Errorf("systemd-analyze verify on the installed unit:\n%s", out)
			}
			scope := map[bool]string{false: "system", true: "user"}[user]
			stateLine := scope + " service: unit " + unitPath + "; not running under systemd"
			step("status", "1", stateLine)
			if !user {
				step("doctor", "0", stateLine)
			}
			step("again", "0", "installed already")
			step("uninstall", "0", "removed "+unitPath)
			if left := read("after.ls"); left != "" {
				t.Errorf("uninstall left %q in %s", left, unitDir)
			}
			step("status2", "1", scope+" service: not installed")

			// What the library asked of systemd: enable, reload; disable, reload.
			want := []string{"enable mcpsandbox.service", "daemon-reload", "disable mcpsandbox.service", "daemon-reload"}
			if user {
				want = []string{"enable --user mcpsandbox.service", "daemon-reload --user", "disable --user mcpsandbox.service", "daemon-reload --user"}
			}
			if got := strings.Fields(strings.ReplaceAll(read("../systemctl.log"), " ", "_")); strings.Join(got, "\n") != strings.ReplaceAll(strings.Join(want, "\n"), " ", "_") {
				t.Errorf("systemctl was asked:\n%s\nwant:\n%s", read("../systemctl.log"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestServiceRefusesWithoutSystemd(t *testing.T) {
	if sys := service.ChosenSystem(); sys != nil && sys.String() == systemdName {
		t.Skip("systemd runs here: install would be real")
	}
	_, stderr, code := runCLI(t, "service", "install")
	if code != exitFailure || !strings.Contains(stderr, "not systemd") || !strings.Contains(stderr, "mcpsandbox daemon --config FILE") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestServiceCommandLine(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"service"}, "give an action: install"},
		{[]string{"service", "instal"}, `unknown action "instal"`},
		{[]string{"service", "start", "--config", "x.json"}, "--config is for install and unit"},
		{[]string{"service", "unit", "--config", "50%.json"}, "systemd would read"},
	} {
		_, stderr, code := runCLI(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	// The default unit is the shipped one, for the binary running.
	stdout, _, code := runCLI(t, "service", "unit", "--user")
	if code != exitOK || stdout != packaging.Render(true, self(t), packaging.DaemonArgs(packaging.UserConfig)) {
		t.Errorf("service unit --user: exit %d:\n%s", code, stdout)
	}
}

// verifyUnit runs systemd-analyze verify on unit and returns what it said.
func verifyUnit(t *testing.T, user bool, unit string) string {
	t.Helper()
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Log("no systemd-analyze (Debian's systemd package): the unit is not verified")
		return ""
	}
	return testenv.VerifyUnit(t, packaging.UnitName, user, unit)
}

// A config the daemon would refuse is refused at install, where it is
// named, rather than at every start of the service.
func TestServiceInstallRefusesABadConfig(t *testing.T) {
	home := t.TempDir()
	bad := filepath.Join(home, "daemon.json")
	if err := os.WriteFile(bad, []byte("{\"mcpServers\": {\"x\": {\"comand\": \"x\"}}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self(t), asCLI, "service", "install", "--user", "--config", bad)
	cmd.Env = append(os.Environ(), forceSystemdEnv+"=1", "HOME="+home, "PATH=/nonexistent")
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != exitFailure || !strings.Contains(string(out), bad+":1:") || !strings.Contains(string(out), "the daemon would refuse it") {
		t.Errorf("exit %d (%v):\n%s", code, err, out)
	}
	if _, err := os.Stat(filepath.Join(home, ".config/systemd/user", packaging.UnitName)); err == nil {
		t.Error("the unit was written anyway")
	}
}
