package packaging

import (
	_ "embed"
	"fmt"
	"strings"
)

// Where the packages install the binary and the daemon's configurations.
const (
	BinaryPath = "/usr/bin/mcpsandbox"
	// SystemConfig is the system daemon's; UserConfig the user daemon's, in
	// systemd's specifier for the user's home.
	SystemConfig = "/etc/mcpsandbox/daemon.json"
	UserConfig   = "%h/.config/mcpsandbox/daemon.json"
	// UnitName is both units' name: `systemctl [--user] status mcpsandbox`.
	UnitName = "mcpsandbox.service"
)

//go:embed systemd/system/mcpsandbox.service
var systemUnit string

//go:embed systemd/user/mcpsandbox.service
var userUnit string

// Unit is the unit the packages ship: the system one, or the user one.
func Unit(user bool) string {
	if user {
		return userUnit
	}
	return systemUnit
}

// DefaultConfig is the configuration the shipped unit names.
func DefaultConfig(user bool) string {
	if user {
		return UserConfig
	}
	return SystemConfig
}

const execStart = "ExecStart="

// DaemonArgs is the daemon's command line after the binary, for config.
func DaemonArgs(config string) []string { return []string{"daemon", "--config", config} }

// Template is Unit as a kardianos/service SystemdScript: the binary and its
// arguments are the library's to fill in, everything else is the unit's.
func Template(user bool) string {
	return replaceExecStart(Unit(user), "{{Path|cmdEscape}}{{range Arguments}} {{.|cmdEscape}}{{end}}")
}

// Render is what Template becomes for the binary at path run with args,
// escaped as the library escapes them (a space as \x20, which systemd
// reads back as a space).
func Render(user bool, path string, args []string) string {
	line := escape(path)
	for _, a := range args {
		line += " " + escape(a)
	}
	return replaceExecStart(Unit(user), line)
}

func escape(s string) string { return strings.ReplaceAll(s, " ", `\x20`) }

func replaceExecStart(unit, command string) string {
	lines := strings.SplitAfter(unit, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, execStart) {
			lines[i] = execStart + command + "\n"
			return strings.Join(lines, "")
		}
	}
	panic("packaging: a unit without ExecStart=")
}

// CheckArgument reports why s cannot be put in ExecStart= as the library
// writes it: systemd would read these characters as quoting, escapes,
// specifiers or variables.
func CheckArgument(s string) error {
	if i := strings.IndexAny(s, "\"'\\%$\n;"); i >= 0 {
		return fmt.Errorf("%q has %q, which systemd would read as more than a character of a path: use a path without it", s, s[i])
	}
	return nil
}

// AppArmorProfilePath is where the packages install AppArmorProfile.
const AppArmorProfilePath = "/etc/apparmor.d/usr.bin.mcpsandbox"

// AppArmorProfile lets BinaryPath create user namespaces where AppArmor
// restricts them (Ubuntu 23.10 and later).
//
//go:embed apparmor/usr.bin.mcpsandbox
var AppArmorProfile string
