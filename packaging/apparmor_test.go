package packaging

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

func TestAppArmorProfileAllowsUserNamespacesForThePackagedBinary(t *testing.T) {
	for _, want := range []string{"abi <abi/4.0>,\n", "profile mcpsandbox " + BinaryPath + " flags=(unconfined) {\n", "  userns,\n"} {
		if !strings.Contains(AppArmorProfile, want) {
			t.Errorf("the profile has no %q", want)
		}
	}
}

// The exact profile parses with AppArmor 4's parser (Debian 13's 4.1, in
// the guest tier; Ubuntu 24.04's). Debian 12's apparmor 3.0.8 knows
// neither abi 4.0 nor the userns rule: there the profile is parsed without
// them, which checks the rest (the attachment, flags, includes).
func TestAppArmorProfileParses(t *testing.T) {
	if testenv.AppArmorParser() == "" {
		t.Skip("no apparmor_parser (Debian's apparmor package; scripts/test-setup.sh)")
	}
	profile := AppArmorProfile
	if out, err := parseProfile(t, profile); err != nil {
		if !strings.Contains(out, "Could not open 'abi/4.0'") {
			t.Fatalf("apparmor_parser: %v\n%s", err, out)
		}
		t.Log("apparmor_parser predates AppArmor 4 (no abi/4.0): parsing the profile without abi 4.0 and userns")
		profile = strings.Replace(profile, "abi <abi/4.0>,", "abi <abi/3.0>,", 1)
		profile = strings.Replace(profile, "  userns,\n", "", 1)
		if out, err := parseProfile(t, profile); err != nil {
			t.Errorf("apparmor_parser: %v\n%s", err, out)
		}
	}
	// The check sees a broken profile.
	if _, err := parseProfile(t, strings.Replace(profile, "flags=(unconfined)", "flags=(unconfined", 1)); err == nil {
		t.Error("apparmor_parser accepted a profile with unbalanced parentheses")
	}
}

// parseProfile runs apparmor_parser in parse-only mode (-Q: no kernel,
// -K: no cache) on profile.
func parseProfile(t *testing.T, profile string) (string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "usr.bin.mcpsandbox")
	if err := os.WriteFile(path, []byte(profile), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(testenv.AppArmorParser(), "-Q", "-K", path).CombinedOutput()
	return string(out), err
}
