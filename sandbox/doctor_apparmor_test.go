package sandbox

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The AppArmor fix doctor prints is a shell command; its printf part must
// write the profile Ubuntu needs: userns allowed for this very binary.
func TestAppArmorFixWritesTheProfile(t *testing.T) {
	fix := appArmorFix()
	start, end := strings.Index(fix, "`"), strings.LastIndex(fix, "`")
	if start < 0 || end <= start {
		t.Fatalf("no command in %q", fix)
	}
	command, _, ok := strings.Cut(fix[start+1:end], " | sudo tee ")
	if !ok {
		t.Fatalf("the command %q does not write the profile with sudo tee", fix[start+1:end])
	}
	out, err := exec.Command("/bin/sh", "-c", command).Output()
	if err != nil {
		t.Fatalf("%s: %v", command, err)
	}
	exe, _ := os.Executable()
	want := "abi <abi/4.0>,\ninclude <tunables/global>\nprofile mcpsandbox " + exe + " flags=(unconfined) {\n  userns,\n}\n"
	if string(out) != want {
		t.Errorf("the profile written is\n%s\nwant\n%s", out, want)
	}
}

// Under the restriction, doctor fails the user namespace line for a binary
// under no profile, and names the profile the packages or install.sh put
// beside the binary.
func TestAppArmorRestrictionAndItsFix(t *testing.T) {
	for _, c := range []struct {
		label string
		root  bool
		want  bool
	}{{"unconfined", false, true}, {"", false, true}, {"mcpsandbox", false, false}, {"mcpsandbox", true, true}} {
		if got := appArmorRefuses(c.label, c.root); got != c.want {
			t.Errorf("label %q root %v: refuses %v, want %v", c.label, c.root, got, c.want)
		}
	}
	for _, c := range []struct {
		exe       string
		installed bool
		want      string
	}{
		{"/usr/bin/mcpsandbox", true, "sudo apparmor_parser -r /etc/apparmor.d/usr.bin.mcpsandbox"},
		{"/usr/bin/mcpsandbox", false, "install the package's AppArmor profile"},
		{"/usr/local/bin/mcpsandbox", true, "sudo apparmor_parser -r /etc/apparmor.d/usr.local.bin.mcpsandbox"},
		{"/opt/x/mcpsandbox", false, "sudo tee /etc/apparmor.d/opt.x.mcpsandbox && sudo apparmor_parser -r /etc/apparmor.d/opt.x.mcpsandbox"},
	} {
		if got := appArmorFixFor(c.exe, c.installed); !strings.Contains(got, c.want) {
			t.Errorf("%s (installed %v): %q lacks %q", c.exe, c.installed, got, c.want)
		}
	}
	c := checkUserNamespaces(false)
	if !c.OK && !strings.Contains(c.Fix, "sudo mcpsandbox service install") {
		t.Errorf("the fix does not name the system service: %q", c.Fix)
	}
}
