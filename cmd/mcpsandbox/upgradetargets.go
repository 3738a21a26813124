package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

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
	spec     int      // where in args the package spec is
	runFlags []string // run's options the server starts with (prepare's too)
	line     []string // the launch line
	name     string   // the server's display name (launch's)
	id       string   // its identity: the lock's key (launch's state name)
}

// pkg is the npm package the target's launch line runs, and the version
// its spec names ("" when it floats).
func (t upgradeTarget) pkg() (name, version string) {
	spec := strings.TrimPrefix(t.args[t.spec], "--package=")
	if v, ok := strings.CutPrefix(spec, t.name+"@"); ok {
		return t.name, v
	}
	return t.name, ""
}

// withVersion is the entry's args with the package spec at version.
func (t upgradeTarget) withVersion(version string) []string {
	args := slices.Clone(t.args)
	prefix := ""
	if strings.HasPrefix(args[t.spec], "--package=") {
		prefix = "--package="
	}
	args[t.spec] = prefix + t.name + "@" + version
	return args
}

// candidateLine is the launch line with the package at version.
func (t upgradeTarget) candidateLine(version string) []string {
	args := t.withVersion(version)
	if t.daemon {
		return append([]string{t.command}, args...)
	}
	return args[len(args)-len(t.line):]
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
		t := upgradeTarget{file: path, daemon: true, section: e.Section, entry: e.Name, command: e.Command, args: e.Args,
			line: append([]string{e.Command}, e.Args...)}
		if s.Policy != "" {
			t.runFlags = []string{"--policy", s.Policy}
		}
		if t.identify(name, 0, host.InDir(filepath.Dir(path))) {
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
			runFlags: e.Args[1:dash], line: e.Args[dash+1:]}
		if t.identify(name, dash+1, host) {
			found = append(found, t)
		}
	}
	return found, true, nil
}

// identify reads the target's launch line (whose first word is args[from],
// or the command for a daemon's entry) and says whether it is the server
// called name and runs an npm package through npx whose spec upgrade can
// set.
func (t *upgradeTarget) identify(name string, from int, host launch.Host) bool {
	l := launch.Read(t.line, launch.BuiltinMatches(), host)
	t.name, t.id = l.Name, filepath.Base(l.StateDir)
	if name != t.entry && name != t.name && name != t.id {
		return false
	}
	if filepath.Base(t.line[0]) != "npx" {
		return false
	}
	for i := from; i < len(t.args); i++ {
		a := strings.TrimPrefix(t.args[i], "--package=")
		if a == t.name || strings.HasPrefix(a, t.name+"@") {
			t.spec = i
			return true
		}
	}
	return false
}
