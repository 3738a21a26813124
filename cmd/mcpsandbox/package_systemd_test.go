package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/daemon"
	"github.com/mcpsandbox/mcpsandbox/packaging"
)

// The installed .deb under a real systemd, in the guest tier (tier.sh's
// package phases, after `dpkg -i`): `mcpsandbox service install` of the
// packaged binary, system and --user, gives a unit that starts, keeps a
// server of its config, survives the server's crash, serves `connect`
// from the user's session, and leaves nothing on stop and uninstall; then
// `dpkg --purge` leaves nothing of the package. The package's own unit in
// /usr/lib/systemd/system is not enabled (its config names no servers):
// `service install` writes /etc/systemd/system/mcpsandbox.service, which
// systemd loads first, and uninstall leaves the package's in view again.

// installedCLI is the package's binary.
var installedCLI = []string{"/usr/bin/mcpsandbox"}

// requirePackage: the guest tier, with the .deb installed.
func requirePackage(t *testing.T) {
	t.Helper()
	requireGuest(t)
	out, err := exec.Command("dpkg-query", "-W", "-f", "${Status}", "mcpsandbox").CombinedOutput()
	if err != nil || !strings.HasSuffix(string(out), " installed") {
		t.Fatalf("the mcpsandbox package is not installed (tier.sh installs it before this test): %v: %s", err, out)
	}
}

// TestPackageSystemdSystemService: root installs the system service for
// /etc/mcpsandbox/daemon.json naming the example server and the guest's
// user; root and that user connect, another uid is refused.
func TestPackageSystemdSystemService(t *testing.T) {
	requirePackage(t)
	if os.Geteuid() != 0 {
		t.Skip("the system service: runs in the guest tier's root package phase")
	}
	guestUser, err := user.Lookup("user")
	if err != nil {
		t.Fatalf("the guest's user: %v", err)
	}
	uid, _ := strconv.Atoi(guestUser.Uid)
	gid, _ := strconv.Atoi(guestUser.Gid)
	config := packaging.DefaultConfig(false)
	writePackageConfig(t, config, `"mcpsandbox": {"users": ["user"]}, `)

	d := installService(t, false)
	if want := filepath.Join(daemon.SystemSocketDir, daemon.SocketName); d.socket != want {
		t.Errorf("the system daemon listens on %s, want %s", d.socket, want)
	}
	rootHost := connectWith(t, nil, hostEnv())
	rootHost.echo(t, "root's host")
	userHost := connectWith(t, &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, userHostEnv(guestUser))
	userHost.echo(t, "the user's host")
	st := daemonStatusWith(t, installedCLI, os.Environ())
	checkRunning(t, instanceOf(t, st, rootHost), 0)
	inst := instanceOf(t, st, userHost)
	checkRunning(t, inst, uid)

	refusedPeerWith(t, installedCLI, 4242)
	crashAndRestartWith(t, installedCLI, userHost, inst)
	rootHost.echo(t, "root's host, after the other instance's crash")
	rootHost.cs.Close()
	stopAndUninstall(t, d, userHost)
}

// TestPackageSystemdUserService: the user, in a login session, installs a
// service of their own for ~/.config/mcpsandbox/daemon.json.
func TestPackageSystemdUserService(t *testing.T) {
	requirePackage(t)
	if os.Geteuid() == 0 {
		t.Skip("a user's service: runs in the guest tier's user package phase")
	}
	runtimeDir := os.Getenv("XDG_RUNTIME_DIR")
	if runtimeDir == "" {
		t.Fatal("XDG_RUNTIME_DIR is not set: the user phase runs in a login session, which pam_systemd gives one")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(home, ".config", "mcpsandbox", "daemon.json")
	writePackageConfig(t, config, "")

	d := installService(t, true)
	if want := filepath.Join(runtimeDir, "mcpsandbox", daemon.SocketName); d.socket != want {
		t.Errorf("the user's daemon listens on %s, want %s", d.socket, want)
	}
	host := connectWith(t, nil, hostEnv())
	host.echo(t, "through the user's daemon")
	inst := instanceOf(t, daemonStatusWith(t, installedCLI, os.Environ()), host)
	checkRunning(t, inst, os.Getuid())
	crashAndRestartWith(t, installedCLI, host, inst)
	stopAndUninstall(t, d, host)
}

// TestPackageSystemdPurge: `dpkg --purge` (after the service tests) leaves
// no file of the package, nor the daemon's state.
func TestPackageSystemdPurge(t *testing.T) {
	requirePackage(t)
	if os.Geteuid() != 0 {
		t.Skip("dpkg --purge is root's")
	}
	out, err := exec.Command("dpkg-query", "-L", "mcpsandbox").Output()
	if err != nil {
		t.Fatalf("dpkg-query -L mcpsandbox: %v%s", err, stderrOf(err))
	}
	var files []string
	for _, f := range strings.Fields(string(out)) {
		if fi, err := os.Lstat(f); err == nil && !fi.IsDir() {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		t.Fatalf("dpkg-query -L mcpsandbox lists no files:\n%s", out)
	}
	if _, err := os.Stat("/var/lib/mcpsandbox"); err != nil {
		t.Errorf("before the purge: /var/lib/mcpsandbox (the system service's state): %v; want it made by the service's run", err)
	}
	// Where AppArmor runs, postinst loaded the profile and the purge unloads it.
	apparmor := appArmorLoadsProfiles()
	if apparmor && !strings.Contains(loadedProfiles(t), packageProfileLabel+"\n") {
		t.Errorf("before the purge: the kernel has no AppArmor profile %q (postinst loads it)", packageProfileLabel)
	}
	if out, err := exec.Command("dpkg", "--purge", "mcpsandbox").CombinedOutput(); err != nil {
		t.Fatalf("dpkg --purge mcpsandbox: %v\n%s", err, out)
	}
	if apparmor && strings.Contains(loadedProfiles(t), packageProfileLabel+"\n") {
		t.Errorf("after dpkg --purge: the kernel still has the AppArmor profile %q", packageProfileLabel)
	}
	for _, f := range append(files, "/var/lib/mcpsandbox", "/var/log/mcpsandbox", "/etc/mcpsandbox",
		"/etc/systemd/system/mcpsandbox.service", "/etc/systemd/system/multi-user.target.wants/mcpsandbox.service") {
		if _, err := os.Lstat(f); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("after dpkg --purge: %s is still there (lstat: %v)", f, err)
		}
	}
	if out, _ := exec.Command("dpkg-query", "-W", "-f", "${Status}", "mcpsandbox").CombinedOutput(); strings.Contains(string(out), "installed") {
		t.Errorf("after dpkg --purge: dpkg says %q", out)
	}
}

// writePackageConfig writes config, the example server (this test binary
// in its role, confined by the policy its command selects) with top before
// the servers' map; the test's end removes it.
func writePackageConfig(t *testing.T, config, top string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(config), 0o755); err != nil {
		t.Fatal(err)
	}
	old, oldErr := os.ReadFile(config)
	body := fmt.Sprintf(`{%s"mcpServers": {%q: {"command": %q, "args": [%q]}}}`, top, exampleName, self(t), asExampleServer)
	if err := os.WriteFile(config, []byte(body+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if oldErr == nil {
			os.WriteFile(config, old, 0o644)
		} else {
			os.Remove(config)
		}
	})
}

// serviceCLI runs the installed `mcpsandbox service ARGS [--user]`.
func serviceCLI(userManager bool, args ...string) (string, error) {
	if userManager {
		args = append(args, "--user")
	}
	out, err := exec.Command(installedCLI[0], append([]string{"service"}, args...)...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// installService: `service install` and `service start`; the unit is the
// one install wrote, enabled, and active once start returns (Type=notify).
func installService(t *testing.T, userManager bool) *daemonService {
	t.Helper()
	d := &daemonService{unit: packaging.UnitName, user: userManager}
	t.Cleanup(func() { // (errors: gone already)
		serviceCLI(userManager, "stop")
		serviceCLI(userManager, "uninstall")
	})
	if out, err := serviceCLI(userManager, "install"); err != nil {
		t.Fatalf("mcpsandbox service install: %v\n%s", err, out)
	}
	want := installedUnitPath(userManager)
	if got := d.show(t, "FragmentPath"); got != want {
		t.Errorf("systemd loads %s, want the unit service install wrote, %s", got, want)
	}
	if got := d.show(t, "UnitFileState"); got != "enabled" {
		t.Errorf("after service install: UnitFileState %s, want enabled", got)
	}
	if out, err := serviceCLI(userManager, "start"); err != nil {
		t.Fatalf("mcpsandbox service start: %v\n%s\njournal:\n%s", err, out, d.journalText())
	}
	if out, err := d.systemctl("is-active", d.unit); out != "active" {
		t.Fatalf("systemctl is-active %s after service start: %s (%v)\njournal:\n%s", d.unit, out, err, d.journalText())
	}
	if out, err := serviceCLI(userManager, "status"); err != nil || !strings.Contains(out, want) || !strings.Contains(out, "active") {
		t.Errorf("mcpsandbox service status: %v: %q; want unit %s, active", err, out, want)
	}
	d.settle(t, installedCLI)
	if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", d.pid)); exe != installedCLI[0] && os.Geteuid() == 0 {
		t.Errorf("the daemon runs %s, want the package's %s", exe, installedCLI[0])
	}
	return d
}

// connectWith is a host's session through the installed `mcpsandbox connect`.
func connectWith(t *testing.T, cred *syscall.Credential, env []string) *hostClient {
	t.Helper()
	return connectDaemonWith(t, installedCLI, cred, env, "2025-11-25")
}

// stopAndUninstall: `service stop` with a host attached ends its session
// and leaves no process, socket or cgroup; `service uninstall` removes the
// unit, and what systemd would load is the package's again.
func stopAndUninstall(t *testing.T, d *daemonService, h *hostClient) {
	t.Helper()
	stopWith(t, d, h, "mcpsandbox service stop", func() (string, error) { return serviceCLI(d.user, "stop") })
	if state, result := d.show(t, "ActiveState"), d.show(t, "Result"); state != "inactive" || result != "success" {
		t.Errorf("after service stop: state %s, result %s; want inactive, success", state, result)
	}
	path := installedUnitPath(d.user)
	if out, err := serviceCLI(d.user, "uninstall"); err != nil {
		t.Fatalf("mcpsandbox service uninstall: %v\n%s", err, out)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after service uninstall: %s is still there (stat: %v)", path, err)
	}
	packaged := "/usr/lib/systemd/system/" + packaging.UnitName
	if d.user {
		packaged = "/usr/lib/systemd/user/" + packaging.UnitName
	}
	// (Debian 12 names it by /lib, a symlink to /usr/lib on a merged /usr.)
	if got := d.show(t, "FragmentPath"); !sameFile(got, packaged) {
		t.Errorf("after service uninstall systemd loads %q, want the package's %s", got, packaged)
	}
	if got := d.show(t, "UnitFileState"); got == "enabled" {
		t.Errorf("after service uninstall: UnitFileState %s, want it no longer enabled", got)
	}
	out, err := serviceCLI(d.user, "status")
	if err == nil || !strings.Contains(out, packaged) || strings.Contains(out, ", active") {
		t.Errorf("mcpsandbox service status after uninstall: %v: %q; want the package's unit %s, not active, exit 1", err, out, packaged)
	}
}
