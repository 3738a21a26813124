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
