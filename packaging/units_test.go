package packaging

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// The shipped units are what `service install` writes for the packaged
// binary and configuration: one text, two ways to install it.
func TestShippedUnitsAreTheTemplateForThePackagedBinary(t *testing.T) {
	for _, user := range []bool{false, true} {
		got := Render(user, BinaryPath, DaemonArgs(DefaultConfig(user)))
		if got != Unit(user) {
			t.Errorf("user=%v: the shipped unit's ExecStart= is not %s %s:\n%s", user, BinaryPath, strings.Join(DaemonArgs(DefaultConfig(user)), " "), got)
		}
	}
}

func TestUnitsKeepWhatASupervisorOfSandboxesNeeds(t *testing.T) {
	for _, user := range []bool{false, true} {
		unit := Unit(user)
		for _, want := range []string{"Type=notify\n", "Delegate=yes\n", "KillMode=mixed\n", "Restart=on-failure\n", "RuntimeDirectory=mcpsandbox\n", "StateDirectory=mcpsandbox\n", "ExecReload=/bin/kill -HUP $MAINPID\n"} {
			if !strings.Contains(unit, want) {
				t.Errorf("user=%v: no %q", user, want)
			}
		}
		wantedBy := "WantedBy=multi-user.target\n"
		if user {
			wantedBy = "WantedBy=default.target\n" // a user manager has no multi-user.target
		}
		if !strings.HasSuffix(unit, "[Install]\n"+wantedBy) {
			t.Errorf("user=%v: the unit does not end in [Install] %s", user, wantedBy)
		}
	}
	// Directives that would break confinement appear only in the comments
	// saying why they are left out.
	for _, line := range strings.Split(Unit(false), "\n") {
		for _, bad := range []string{"PrivateUsers=", "RestrictNamespaces=", "SystemCallFilter=", "ProtectControlGroups=", "ProtectHome=", "MemoryDenyWriteExecute=", "ProtectHostname=", "RestrictSUIDSGID="} {
			if strings.HasPrefix(line, bad) {
				t.Errorf("the system unit sets %s", line)
			}
		}
	}
}

func TestUnitsPassSystemdAnalyzeVerify(t *testing.T) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("no systemd-analyze (Debian's systemd package; scripts/test-setup.sh)")
	}
	// verify checks that ExecStart= names an executable: a stand-in for
	// the binary, which the packages put at BinaryPath.
	dir := t.TempDir()
	exe := filepath.Join(dir, "bin dir", "mcpsandbox")
	if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, user := range []bool{false, true} {
		unit := Render(user, exe, DaemonArgs(filepath.Join(dir, "daemon.json")))
		if out := verify(t, user, unit); out != "" {
			t.Errorf("user=%v: systemd-analyze verify:\n%s\nunit:\n%s", user, out, unit)
		}
	}
	// The check sees a broken unit: verify exits 0 on unknown keys, so
	// the output is what counts.
	if out := verify(t, false, strings.Replace(Unit(false), "Delegate=yes", "Delegate=maybe\nBogus=1", 1)); !strings.Contains(out, "Bogus") {
		t.Errorf("verify did not report an unknown key: %q", out)
	}
}

// verify runs systemd-analyze verify on unit and returns what it reported.
func verify(t *testing.T, user bool, unit string) string {
	t.Helper()
	return testenv.VerifyUnit(t, UnitName, user, unit)
}
