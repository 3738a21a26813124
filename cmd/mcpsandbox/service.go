package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kardianos/service"

	daemonconfig "github.com/mcpsandbox/mcpsandbox/daemon/config"
	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
	"github.com/mcpsandbox/mcpsandbox/packaging"
)

func serviceCommand(args []string, std stdio) int {
	action := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		action, args = args[0], args[1:]
	}
	fs := newFlagSet("service")
	user := fs.Bool("user", false, "")
	config := fs.String("config", "", "")
	if status, ok := parseFlags(fs, "service", args, std); !ok {
		return status
	}
	if status, ok := noArgs(fs, "service", std); !ok {
		return status
	}
	if *config != "" && action != "install" && action != "unit" {
		return usageFailure("service", "--config is for install and unit: the installed unit names its config", std)
	}
	scope := serviceScope(*user)
	switch action {
	case "unit":
		unit, err := unitFor(*user, *config)
		if err != nil {
			return usageFailure("service", err.Error(), std)
		}
		fmt.Fprint(std.Out, unit)
		return exitOK
	case "status":
		st := serviceStateOf(*user)
		fmt.Fprintf(std.Out, "%s\n", st)
		if st.Active != "active" {
			return exitFailure
		}
		return exitOK
	case "install", "uninstall", "start", "stop":
	case "":
		return usageFailure("service", "give an action: install, uninstall, start, stop, status or unit", std)
	default:
		return usageFailure("service", fmt.Sprintf("unknown action %q: use install, uninstall, start, stop, status or unit", action), std)
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(std.Err, "mcpsandbox service %s: %s\n", action, fmt.Sprintf(format, a...))
		return exitFailure
	}
	if sys := service.ChosenSystem(); sys == nil || sys.String() != systemdName {
		return fail("this machine's service manager is %s, not systemd, and mcpsandbox ships systemd units only: start `mcpsandbox daemon --config FILE` from your init system instead (docs/daemon.md)", managerName(sys))
	}
	if !*user && os.Geteuid() != 0 {
		return fail("the system service is root's: run it as root (sudo), or give --user for a daemon of your own")
	}
	if action == "install" {
		return serviceInstall(*user, *config, std, fail)
	}
	s, err := newService(*user, packaging.DefaultConfig(*user))
	if err != nil {
		return fail("%v", err)
	}
	switch action {
	case "uninstall":
		path := installedUnitPath(*user)
		if _, err := os.Stat(path); err != nil {
			if st := serviceStateOf(*user); st.Unit != "" {
				return fail("%s is installed as %s, not by `service install`: remove the package that installed it, or `systemctl%s disable --now %s`", scope, st.Unit, userFlag(*user), packaging.UnitName)
			}
			return fail("%s is not installed: there is no %s", scope, path)
		}
		if serviceStateOf(*user).Active == "active" {
			if err := s.Stop(); err != nil {
				return fail("stopping it: %v", err)
			}
		}
		if err := s.Uninstall(); err != nil {
			return fail("%v", err)
		}
		fmt.Fprintf(std.Out, "mcpsandbox service: removed %s\n", path)
	case "start":
		err = s.Start()
	case "stop":
		err = s.Stop()
	}
	if err != nil {
		return fail("%v (`mcpsandbox service status%s` and `journalctl%s -u %s` say more)", err, userFlag(*user), userFlag(*user), packaging.UnitName)
	}
	return exitOK
}

func serviceInstall(user bool, config string, std stdio, fail func(string, ...any) int) int {
	unit, err := unitFor(user, config)
	if err != nil {
		return fail("%v", err)
	}
	if config == "" {
		config = packaging.DefaultConfig(user)
	}
	if _, err := os.Stat(expandHome(config)); err != nil {
		return fail("no config %s: write the servers to keep there (`mcpsandbox help daemon`), or give --config FILE", config)
	}
	// The daemon would refuse it at every start: say so now.
	if _, err := daemonconfig.Load(expandHome(config)); err != nil {
		return fail("%v (the daemon would refuse it: fix it, then install)", err)
	}
	path := installedUnitPath(user)
	if old, err := os.ReadFile(path); err == nil {
		if string(old) == unit {
			fmt.Fprintf(std.Out, "mcpsandbox service: %s is installed already, as `mcpsandbox service unit%s` prints it\n", path, userFlag(user))
			return exitOK
		}
		return fail("%s exists and differs from the unit `mcpsandbox service unit%s` prints: run `mcpsandbox service uninstall%s` first", path, userFlag(user), userFlag(user))
	}
	if user {
		// The library makes the directory; an installer's test may mount over it first.
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fail("%v", err)
		}
	}
	s, err := newService(user, absConfig(config))
	if err != nil {
		return fail("%v", err)
	}
	if err := s.Install(); err != nil {
		return fail("%v", err)
	}
	fmt.Fprintf(std.Out, "mcpsandbox service: installed %s (enabled, for %s); start it with `mcpsandbox service start%s`\n", path, config, userFlag(user))
	return exitOK
}

// systemdName is how kardianos/service names systemd.
const systemdName = "linux-systemd"

func managerName(sys service.System) string {
	if sys == nil {
		return "unknown"
	}
	return sys.String()
}

func serviceScope(user bool) string {
	if user {
		return "your user service"
	}
	return "the system service"
}

func userFlag(user bool) string {
	if user {
		return " --user"
	}
	return ""
}

// unitFor is the unit install writes: the shipped one, run by this binary
// with config (by default the one the shipped unit names).
func unitFor(user bool, config string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if err := packaging.CheckArgument(exe); err != nil {
		return "", fmt.Errorf("the binary's path %v", err)
	}
	if config == "" {
		config = packaging.DefaultConfig(user)
	} else {
		if err := packaging.CheckArgument(config); err != nil {
			return "", fmt.Errorf("--config %v", err)
		}
		config = absConfig(config)
	}
	return packaging.Render(user, exe, packaging.DaemonArgs(config)), nil
}

func absConfig(config string) string {
	if strings.HasPrefix(config, "%h/") {
		return config
	}
	if abs, err := filepath.Abs(config); err == nil {
		return abs
	}
	return config
}

// expandHome reads systemd's %h as the unit will.
func expandHome(path string) string {
	if rest, ok := strings.CutPrefix(path, "%h/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return path
}

func newService(user bool, config string) (service.Service, error) {
	return service.New(noProgram{}, &service.Config{
		Name:        strings.TrimSuffix(packaging.UnitName, ".service"),
		DisplayName: "mcpsandbox daemon",
		Description: "confined, supervised MCP servers",
		Arguments:   packaging.DaemonArgs(config),
		Option: service.KeyValue{
			"UserService":   user,
			"SystemdScript": packaging.Template(user),
		},
	})
}

// noProgram: the service runs `mcpsandbox daemon`, never this process.
type noProgram struct{}

func (noProgram) Start(service.Service) error { return errors.New("not a service program") }
func (noProgram) Stop(service.Service) error  { return nil }

func servicePage() *cmdline.Page {
	return &cmdline.Page{
		Name: "mcpsandbox service - install the daemon as a systemd service",
		Synopsis: []string{
			"mcpsandbox service install [--user] [--config FILE]",
			"mcpsandbox service uninstall|start|stop|status [--user]",
			"mcpsandbox service unit [--user] [--config FILE]",
		},
		Description: []string{
			"Installs `mcpsandbox daemon` as a systemd service, once, so that every MCP host's servers run confined from then on: hosts reach them with `mcpsandbox connect NAME`. The system service runs as root and gives each server a dynamic uid of its own, so it needs no user namespaces and works where they are restricted (Ubuntu 24.04's AppArmor); its config is /etc/mcpsandbox/daemon.json and its socket /run/mcpsandbox/daemon.sock, which every user may reach (the config's users decide who may use a server). With --user it is a service of your own systemd manager, started at login, with ~/.config/mcpsandbox/daemon.json and a socket in $XDG_RUNTIME_DIR/mcpsandbox.",
			"The unit is the one the .deb and .rpm ship, run by this binary: Type=notify, Delegate=yes (the daemon makes a cgroup per server), KillMode=mixed (the daemon stops its servers itself, answering what is in flight), Restart=on-failure, its runtime and state directories, and every hardening directive that leaves confinement intact; the unit's comments name each one left out and why. `unit` prints it.",
			"install writes /etc/systemd/system/mcpsandbox.service (with --user, ~/.config/systemd/user/mcpsandbox.service) and enables it; installing the same unit again changes nothing, and a different one is refused until uninstall. uninstall stops and disables the service and removes the unit. start and stop are systemctl's. status says which unit systemd would load and whether it is active, as `mcpsandbox doctor` does.",
		},
		Options: []cmdline.Option{
			{Flag: "--user", Text: "Your own user service instead of the system's."},
			{Flag: "--config FILE", Text: "The daemon's config (install and unit). Default: /etc/mcpsandbox/daemon.json, with --user ~/.config/mcpsandbox/daemon.json. It must exist when installing."},
			helpOption,
		},
		ExitStatus: []string{
			"0 on success; for status, when the service is active.",
			"1 when the action failed (no systemd, not root for the system service, no config file), or for status when the service is not active.",
			"2 when the command line is wrong.",
		},
		Examples: []cmdline.Example{
			{Command: "sudo mcpsandbox service install && sudo mcpsandbox service start", Text: "Run the servers of /etc/mcpsandbox/daemon.json for every user:"},
			{Command: "mcpsandbox service install --user && mcpsandbox service start --user", Text: "Or a daemon of your own, from your login on:"},
		},
	}
}
