package main

import (
	"errors"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
)

// goNames are the Go names of settings, which users never type.
var goNames = testenv.GoNames(reflect.TypeFor[policy.Policy](), reflect.TypeFor[sandbox.Spec]())

// Every line `mcpsandbox doctor` prints is rendered for its reader: no
// {Field} reference left as written and no Go field name, as root and as
// an ordinary user (whose report has the most fixes to name).
func TestDoctorNamesSettingsAsFlagsForRootAndUsers(t *testing.T) {
	doctor := func(t *testing.T, cmd *exec.Cmd) {
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == exitFailure) {
			t.Fatalf("doctor: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "mcpsandbox doctor: ") {
			t.Fatalf("doctor printed no report:\n%s", out)
		}
		if raw := testenv.Unrendered(string(out), goNames); len(raw) > 0 {
			t.Errorf("doctor's report leaves %q unrendered:\n%s", raw, out)
		}
	}
	t.Run("this user", func(t *testing.T) {
		doctor(t, exec.Command(os.Args[0], asCLI, "doctor"))
	})
	t.Run("ordinary user", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("this is the ordinary user: the subtest above ran as one")
		}
		cmd := exec.Command(testenv.SelfForOthers(t), asCLI, "doctor")
		cmd.Dir = "/"
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: testenv.UnprivUID, Gid: testenv.UnprivUID}}
		doctor(t, cmd)
	})
}
