package packaging

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// install.sh into a scratch DESTDIR, for the system and for a user: the
// binary, the unit `service unit` prints for it, the example config, the
// man pages and (for the system) the profile for the installed path.
func TestInstallScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcpsandbox")
	}
	dir := t.TempDir()
	binary := filepath.Join(dir, "mcpsandbox")
	build := exec.Command("go", "build", "-o", binary, "../cmd/mcpsandbox")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	for _, user := range []bool{false, true} {
		dest, home := filepath.Join(dir, "dest", map[bool]string{false: "system", true: "user"}[user]), filepath.Join(dir, "home")
		args := []string{binary}
		bin, unit, config, man := "/usr/local/bin/mcpsandbox", "/etc/systemd/system/mcpsandbox.service", "/etc/mcpsandbox/daemon.json", "/usr/local/share/man/man1/mcpsandbox-service.1"
		if user {
			args = []string{"--user", binary}
			bin, unit, config, man = home+"/.local/bin/mcpsandbox", home+"/.config/systemd/user/mcpsandbox.service", home+"/.config/mcpsandbox/daemon.json", home+"/.local/share/man/man1/mcpsandbox-service.1"
		}
		cmd := exec.Command("./install.sh", args...)
		cmd.Env = append(os.Environ(), "DESTDIR="+dest, "HOME="+home, "XDG_DATA_HOME=")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("install.sh %v: %v\n%s", args, err, b)
		}
		read := func(p string) string {
			b, err := os.ReadFile(filepath.Join(dest, p))
			if err != nil {
				t.Error(err)
			}
			return string(b)
		}
		if fi, err := os.Stat(filepath.Join(dest, bin)); err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("%s: %v", bin, err)
		}
		if got, want := read(unit), Render(user, bin, DaemonArgs(DefaultConfig(user))); got != want {
			t.Errorf("%s is not the shipped unit for %s:\n%s", unit, bin, got)
		}
		if read(config) != mustRead(t, "daemon.json") {
			t.Errorf("%s is not the example config", config)
		}
		if !strings.Contains(read(man), ".TH MCPSANDBOX\\-SERVICE 1") {
			t.Errorf("no man page %s", man)
		}
		if !user {
			profile := read("/etc/apparmor.d/usr.local.bin.mcpsandbox")
			if !strings.Contains(profile, "profile mcpsandbox /usr/local/bin/mcpsandbox flags=(unconfined) {\n  userns,\n") {
				t.Errorf("the profile does not attach to %s:\n%s", bin, profile)
			}
		}
	}
	// A config of the user's own is kept.
	mine := filepath.Join(dir, "dest/user", dir, "home/.config/mcpsandbox/daemon.json")
	if err := os.WriteFile(mine, []byte(`{"mcpServers": {"x": {"command": "x"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("./install.sh", "--user", binary)
	cmd.Env = append(os.Environ(), "DESTDIR="+filepath.Join(dir, "dest/user"), "HOME="+filepath.Join(dir, "home"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("install.sh again: %v\n%s", err, b)
	}
	if b, _ := os.ReadFile(mine); !strings.Contains(string(b), `"x"`) {
		t.Error("install.sh replaced the user's daemon.json")
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
