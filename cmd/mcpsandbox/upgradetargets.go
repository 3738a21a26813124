package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/mcpsandbox/mcpsandbox/daemon/config"
	"github.com/mcpsandbox/mcpsandbox/hostconfig"
	"github.com/mcpsandbox/mcpsandbox/launch"
)

// upgradeTarget is one place a server's version is written: an entry of
// the daemon's configuration, or an entry of a host's file that wrap
// rewrote to `mcpsandbox run ... -- LAUNCH`.
type upgradeTarget struct {
	file     string // the daemon's configuration or the host's file
	daemon   bool
	section  string // the entry's section and name in file
	entry    string
	command  string   // the entry's command, as written
	args     []string // the entry's args, as written
	at       int      // where in args the launch line starts (-1: at the command)
	runFlags []string // run's options the server starts with (prepare's too)
	launch   launch.Launch
	spec     launch.NpmSpec
	host     launch.Host // what the server is started on (a daemon's: in its config's directory)
}

// line is the target's launch line as written.
func (t upgradeTarget) line() []string { return t.launch.Given }

// withVersion is the entry's command and args with the package at version.
func (t upgradeTarget) withVersion(version string) (string, []string) {
	line := t.launch.WithVersion(version)
	if t.at < 0 {
		return line[0], line[1:]
	}
	return t.command, append(slices.Clone(t.args[:t.at]), line...)
}

// runArgs are run's (and prepare's) arguments for the launch line at
// version.
func (t upgradeTarget) runArgs(version string) []string {
	return append(append(slices.Clone(t.runFlags), "--"), t.launch.WithVersion(version)...)
}

// findUpgradeTargets finds the server called name (an entry's name, or
// the server's display name or identity) in the daemon's configuration
// and in the host files wrap manages.
func findUpgradeTargets(name, daemonConfig string, hostFiles []string, host launch.Host) ([]upgradeTarget, []string, error) {
	var found []upgradeTarget
	var looked []string
	if daemonConfig != "" {
		looked = append(looked, daemonConfig+" (the daemon's)")
		ts, err := daemonTargets(name, daemonConfig, host)
		if err != nil {
			return nil, looked, err
		}
		found = append(found, ts...)
	}
	for _, f := range hostFiles {
		ts, managed, err := hostFileTargets(name, f, host)
		if err != nil {
			return nil, looked, err
		}
		if managed {
			looked = append(looked, f+" (wrapped)")
		}
		found = append(found, ts...)
	}
	return found, looked, nil
}

func daemonTargets(name, path string, host launch.Host) ([]upgradeTarget, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	cfg, err := config.Parse(path, data)
	if err != nil {
		return nil, fmt.Errorf("the daemon's configuration: %v", err)
	}
	entries, err := hostconfig.Entries(data)
	if err != nil {
		return nil, err
	}
	var found []upgradeTarget
	for _, s := range cfg.Servers {
		i := slices.IndexFunc(entries, func(e hostconfig.Entry) bool { return e.Name == s.Name })
		if i < 0 || s.Disabled {
			continue
		}
		e := entries[i]
		t := upgradeTarget{file: path, daemon: true, section: e.Section, entry: e.Name, command: e.Command, args: e.Args, at: -1}
		if s.Policy != "" {
			t.runFlags = []string{"--policy", s.Policy}
		}
		dir := s.Cwd
		if dir == "" {
			dir = filepath.Dir(path) // as the daemon starts it
		}
		if t.identify(name, append([]string{e.Command}, e.Args...), host.InDir(dir)) {
			found = append(found, t)
		}
	}
	return found, nil
}

// hostFileTargets are the entries of a host's file that wrap rewrote to
// run the server called name; managed: wrap manages entries of the file.
func hostFileTargets(name, path string, host launch.Host) (found []upgradeTarget, managed bool, err error) {
	state, err := loadWrapState(path)
	if err != nil || len(state.Entries) == 0 {
		return nil, false, err
	}
	_, entries, err := readHostFile(path)
	if err != nil {
		return nil, true, err
	}
	for _, e := range entries {
		if state.index(e) < 0 || len(e.Args) == 0 || e.Args[0] != "run" {
			continue // not wrap's, or started through the daemon (connect), whose file has the version
		}
		dash := slices.Index(e.Args, "--")
		if dash < 0 || dash == len(e.Args)-1 {
			continue
		}
		t := upgradeTarget{file: path, section: e.Section, entry: e.Name, command: e.Command, args: e.Args,
			at: dash + 1, runFlags: e.Args[1:dash]}
		if t.identify(name, e.Args[dash+1:], host) {
			found = append(found, t)
		}
	}
	return found, true, nil
}

// identify reads the target's launch line and says whether it is the
// server called name (its entry's name, display name or identity) and
// runs one npm package through npx, whose spec upgrade can set.
func (t *upgradeTarget) identify(name string, line []string, host launch.Host) bool {
	t.launch, t.host = launch.Read(line, launch.BuiltinMatches(), host), host
	if name != t.entry && name != t.launch.Name && name != t.launch.ID {
		return false
	}
	var ok bool
	t.spec, ok = t.launch.NpmSpec()
	return ok
}
