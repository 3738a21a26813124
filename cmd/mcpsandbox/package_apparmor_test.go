package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/demo"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// packageProfileLabel is how AppArmor labels a process under the
// package's profile (packaging/apparmor/usr.bin.mcpsandbox).
const packageProfileLabel = "mcpsandbox (unconfined)"

// TestPackageSystemdAppArmor: where AppArmor runs with its userspace (the
// Debian 13 image; tier.sh runs this test only there), the package's
// postinst has loaded its profile, and an unprivileged `mcpsandbox run` of
// the installed binary runs under it: the supervisor and its server carry
// its label, the server is still confined in a user namespace of its own
// (which the profile's `userns,` grants under Ubuntu's restriction), and
// doctor names the profile.
func TestPackageSystemdAppArmor(t *testing.T) {
	requirePackage(t)
	if os.Geteuid() == 0 {
		t.Skip("an unprivileged run: the guest tier's user package phase")
	}
	if !appArmorLoadsProfiles() {
		t.Fatal("AppArmor is not enabled here, or its parser is missing: tier.sh runs this test only on an image with both")
	}
	m, _ := mustHost(t, "", nil, installedCLI[0], "run", "--", self(t), asExampleServer)
	label, err := os.ReadFile(fmt.Sprintf("/proc/%d/attr/apparmor/current", m.cmd.Process.Pid))
	if got := strings.TrimSpace(string(label)); err != nil || got != packageProfileLabel {
		t.Errorf("the installed mcpsandbox runs under %q (%v), want %q: postinst loads /etc/apparmor.d/usr.bin.mcpsandbox", got, err, packageProfileLabel)
	}
	var in demo.ProbeReport
	if err := json.Unmarshal([]byte(m.call(t, demo.ProbeTool, nil)), &in); err != nil {
		t.Fatal(err)
	}
	ownUserNS, _ := os.Readlink("/proc/self/ns/user")
	if in.Namespaces["user"] == "" || in.Namespaces["user"] == ownUserNS {
		t.Errorf("the server's user namespace is %q, ours %q: want one of its own", in.Namespaces["user"], ownUserNS)
	}
	if in.Seccomp != "2" || in.NoNewPrivs != "1" {
		t.Errorf("the server runs with seccomp %q, no_new_privs %q; want 2 and 1", in.Seccomp, in.NoNewPrivs)
	}
	if in.AppArmor != packageProfileLabel {
		t.Errorf("the server runs under AppArmor label %q, want the supervisor's %q", in.AppArmor, packageProfileLabel)
	}
	out, err := exec.Command(installedCLI[0], "doctor").CombinedOutput()
	if want := "this binary runs under AppArmor profile mcpsandbox"; !strings.Contains(string(out), want) {
		t.Errorf("mcpsandbox doctor (%v) does not say %q:\n%s", err, want, out)
	}
}

// appArmorLoadsProfiles: AppArmor runs and its parser is installed, so
// the package's postinst loads its profile.
func appArmorLoadsProfiles() bool {
	enabled, _ := os.ReadFile("/sys/module/apparmor/parameters/enabled")
	return strings.TrimSpace(string(enabled)) == "Y" && testenv.AppArmorParser() != ""
}

// loadedProfiles are the AppArmor profiles the kernel has (root's to read).
func loadedProfiles(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/sys/kernel/security/apparmor/profiles")
	if err != nil {
		t.Fatalf("the kernel's AppArmor profiles: %v", err)
	}
	return string(b)
}
