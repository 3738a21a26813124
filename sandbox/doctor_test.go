package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/sandbox/seccomp"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

func TestDoctorOnThisHost(t *testing.T) {
	requireConfinement(t)
	r := Doctor()
	var out bytes.Buffer
	if err := r.Write(&out, field.Plain); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	t.Log("\n" + text)
	// Every test in this package confines servers here, so this host can.
	if !r.OK() {
		t.Fatal("doctor says the default confinement cannot be enforced on the host these tests confine servers on")
	}
	_, libVersion, _ := seccomp.Info()
	for _, want := range []string{"namespaces", "user namespace", "seccomp", "libseccomp " + libVersion, "cgroups (" + r.Cgroups.Mode + ")", "confined /bin/true", "can be enforced",
		"warn  sockets in grants", "warn  host information", "cpu weight"} {
		if !strings.Contains(text, want) {
			t.Errorf("report does not mention %q", want)
		}
	}
	if strings.Contains(text, "FAIL") {
		t.Errorf("report has FAIL lines although OK() is true")
	}
}

// sbxDoctorRoleEnv makes the test binary print the doctor's report and exit
// 1 when it is not OK, as `mcpsandbox doctor` does.
const sbxDoctorRoleEnv = "MCPSANDBOX_SBX_DOCTOR"

func sbxDoctorRole() int {
	r := Doctor()
	r.Write(os.Stdout, field.Plain)
	if !r.OK() {
		return 1
	}
	return 0
}

func TestDoctorNamesWhatAnUnprivilegedUserLacks(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to start the unprivileged run")
	}
	cmd := sbxUnprivRole(t, sbxDoctorRoleEnv)
	out, err := cmd.CombinedOutput()
	text := string(out)
	t.Log("\n" + text)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("doctor without a delegated cgroup: %v, want exit status 1", err)
	}
	for _, want := range []string{"running as an unprivileged user", "FAIL  cgroups", "fix:", "CANNOT be enforced", "ok    user namespace", "not tried", "warn  server identity", "warn  locks on grants", "warn  sockets in grants", "warn  host information"} {
		if !strings.Contains(text, want) {
			t.Errorf("report does not say %q", want)
		}
	}
}

// The budgets a server shares with its user are a warning, not a failure
// (TestConfined: it runs again unprivileged):
// as root none are shared.
func TestConfinedDoctorTellsTheSharedUserBudgets(t *testing.T) {
	r := Doctor()
	var out bytes.Buffer
	r.Write(&out, field.Plain)
	text := out.String()
	want := "ok    per-user budgets"
	if !r.Root {
		want = "warn  per-user budgets"
		for _, w := range []string{"pipe-user-pages-soft", "ETOOMANYREFS", "run mcpsandbox as root"} {
			if !strings.Contains(text, w) {
				t.Errorf("the per-user budgets line does not say %q:\n%s", w, text)
			}
		}
	}
	if !strings.Contains(text, want) {
		t.Errorf("report does not say %q:\n%s", want, text)
	}
}

// A check's Detail names settings as its Fix does, the caller's way, in
// the report and in Problem; an error kept as a detail keeps its
// references for that.
func TestDoctorRendersSettingsInDetails(t *testing.T) {
	flags := func(f string) string { return "--" + strings.ToLower(f) }
	kept := detail(fmt.Errorf("start: %w", &field.Error{Field: "NoFile", Value: "9", Problem: "too many", Fix: "{Doctor} says why"}))
	r := Report{Checks: []Check{
		{Part: "per-user budgets", Detail: "up to the server's {NoFile}", Fix: "give every server {User}"},
		{Part: "confined /bin/true", Required: true, Detail: kept},
	}}
	var out strings.Builder
	r.Write(&out, flags)
	problem := r.Problem(flags).Error()
	for text, wants := range map[string][]string{
		out.String(): {"up to the server's --nofile", "fix: give every server --user", "start: --nofile 9: too many: --doctor says why"},
		problem:      {"confined /bin/true: start: --nofile 9: too many: --doctor says why"},
	} {
		for _, want := range wants {
			if !strings.Contains(text, want) {
				t.Errorf("%q lacks %q", text, want)
			}
		}
		if strings.ContainsAny(text, "{}") || strings.Contains(text, "NoFile") {
			t.Errorf("settings left unrendered: %s", text)
		}
	}
}
