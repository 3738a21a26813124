package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/packaging"
)

// serviceState is what `service status` and doctor both say about a
// service: which unit systemd would load and whether it is active.
type serviceState struct {
	User   bool
	Unit   string   // the unit file systemd loads; "" when none is installed
	Looked []string // where it looked
	Active string   // systemctl is-active's answer; "" when nobody could say
	Why    string   // why nobody could
}

// installedUnitPath is where `service install` writes the unit.
func installedUnitPath(user bool) string {
	return filepath.Join(unitDirs(user)[0], packaging.UnitName)
}

// unitDirs are the directories systemd loads units from, first one first;
// the packages put theirs in /usr/lib.
func unitDirs(user bool) []string {
	if !user {
		return []string{"/etc/systemd/system", "/run/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system"}
	}
	home, _ := os.UserHomeDir()
	return []string{filepath.Join(home, ".config/systemd/user"), "/etc/systemd/user", "/usr/lib/systemd/user"}
}

func serviceStateOf(user bool) serviceState {
	st := serviceState{User: user}
	for _, dir := range unitDirs(user) {
		p := filepath.Join(dir, packaging.UnitName)
		st.Looked = append(st.Looked, dir)
		if _, err := os.Stat(p); err == nil {
			st.Unit = p
			break
		}
	}
	// sd_booted(3): systemd is PID 1.
	if fi, err := os.Stat("/run/systemd/system"); err != nil || !fi.IsDir() {
		st.Why = "not running under systemd"
		return st
	}
	args := []string{"is-active", packaging.UnitName}
	if user {
		args = append([]string{"--user"}, args...)
	}
	var out, errOut bytes.Buffer
	cmd := exec.Command("systemctl", args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.Run() // non-zero for every state but active: the answer is the output
	st.Active = strings.TrimSpace(out.String())
	if st.Active == "" {
		st.Why = "systemctl " + strings.Join(args, " ") + ": " + strings.TrimSpace(errOut.String())
		if user {
			st.Why = "your systemd user manager does not answer (" + st.Why + ")"
		}
	}
	return st
}

func (st serviceState) String() string {
	var b strings.Builder
	if st.User {
		b.WriteString("user service: ")
	} else {
		b.WriteString("system service: ")
	}
	if st.Unit != "" {
		b.WriteString("unit " + st.Unit)
	} else {
		b.WriteString("not installed (no " + packaging.UnitName + " in " + strings.Join(st.Looked, ", ") + ")")
	}
	if st.Active != "" {
		b.WriteString(", " + st.Active)
	} else {
		b.WriteString("; " + st.Why)
	}
	return b.String()
}
