package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/daemon/config"
	"github.com/mcpsandbox/mcpsandbox/hostconfig"
	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
	"github.com/mcpsandbox/mcpsandbox/launch"
	"github.com/mcpsandbox/mcpsandbox/lock"
)

// daemonKeys are the keys of a host's entry that wrap --daemon copies into
// the daemon's file: what starts the server and VS Code's sandbox, which
// the daemon maps onto the policy. Others (a host's own) stay behind.
var daemonKeys = []string{"type", "command", "args", "env", "envFile", "cwd", "disabled", "sandboxEnabled", "sandbox"}

// wrapFile wraps the stdio servers of the host file path. It reports each
// entry on std.Out and returns false when one could not be wrapped.
func wrapFile(path string, o wrapOptions, std stdio) bool {
	data, entries, err := readHostFile(path)
	if err != nil {
		return fileFailure(path, err, std)
	}
	state, err := loadWrapState(path)
	if err != nil {
		return fileFailure(path, err, std)
	}
	d := daemonEdit{path: o.daemonConfig}
	if o.daemon {
		if err := d.load(); err != nil {
			return fileFailure(o.daemonConfig, err, std)
		}
	}
	out, ok := data, true
	note := entryNotes(std)
	for _, e := range entries {
		switch e.Kind {
		case hostconfig.Remote:
			note(e.Name, "skipped: a remote (http or sse) server, which the host does not start")
			continue
		case hostconfig.HostSandboxed:
			note(e.Name, "left as it is: VS Code runs it in its own sandbox (\"sandboxEnabled\": true)")
			continue
		case hostconfig.Wrapped:
			note(e.Name, "already runs through mcpsandbox")
			continue
		case hostconfig.Invalid:
			note(e.Name, "skipped: %s", e.Why)
			ok = false
			continue
		}
		if e.Command == o.command {
			note(e.Name, "already runs through mcpsandbox")
			continue
		}
		launch := append([]string{e.Command}, e.Args...)
		env, values, warning := entryEnv(path, e)
		if warning != "" {
			note(e.Name, "%s", warning)
		}
		host := entryHost(values)
		r, err := checkEntry(env, launch, host)
		if err != nil {
			note(e.Name, "not wrapped: %v", err)
			ok = false
			continue
		}
		exact, version, err := exactLine(r)
		if err != nil {
			note(e.Name, "not wrapped: %v", err)
			ok = false
			continue
		}
		if exact != nil {
			note(e.Name, "%s is %s now: the file names that version, which prepare installs and the lock pins", cmdline.ShellJoin(launch), version)
			launch = exact
		}
		if !o.dryRun && !o.noPrepare && needsPrepare(launch) {
			var flags []string
			if o.daemon { // the daemon's servers pin into the lock beside its config
				flags = []string{"--lock", lock.BesideConfig(o.daemonConfig)}
			}
			if err := prepareEntry(path, e.Name, flags, env, launch, host, std); err != nil {
				note(e.Name, "not wrapped: %v", err)
				ok = false
				continue
			}
		}
		var args []string
		if o.daemon {
			added, err := d.add(e, launch)
			if err != nil {
				note(e.Name, "not wrapped: %v", err)
				ok = false
				continue
			}
			args = []string{"connect", e.Name}
			if added {
				state.record(e, d.path)
			} else {
				state.record(e, "")
			}
		} else {
			args = append([]string{"run"}, runArgs(env, launch)...)
			state.record(e, "")
		}
		next, err := hostconfig.SetLaunch(out, e.Section, e.Name, o.command, args)
		if err != nil {
			note(e.Name, "not wrapped: %v", err)
			state.forget(e)
			ok = false
			continue
		}
		out = next
		state.wrapped(e, out)
		note(e.Name, "wrapped: %s", cmdline.ShellJoin(append([]string{o.command}, args...)))
	}
	if bytes.Equal(out, data) && !d.changed() {
		fmt.Fprintln(std.Out, "  nothing to change")
		return ok
	}
	if o.dryRun {
		writeDiff(std.Out, path, data, out)
		if d.changed() {
			writeDiff(std.Out, d.path, d.before, d.data)
		}
		return ok
	}
	if d.changed() {
		if err := writeConfig(d.path, d.data); err != nil {
			return fileFailure(d.path, err, std)
		}
		fmt.Fprintf(std.Out, "  added to the daemon's %s\n", d.path)
		reloadDaemonsOf(d.path, std)
	}
	if err := writeBackup(path, data); err != nil {
		return fileFailure(path, err, std)
	}
	if err := state.save(); err != nil {
		return fileFailure(path, err, std)
	}
	if err := writeConfig(path, out); err != nil {
		return fileFailure(path, err, std)
	}
	fmt.Fprintf(std.Out, "  written; the originals are in %s (mcpsandbox wrap --undo %s gives them back)\n", state.path, path)
	return ok
}

// undoFile gives back the entries wrap rewrote in path.
func undoFile(path string, o wrapOptions, std stdio) bool {
	state, err := loadWrapState(path)
	if err != nil {
		return fileFailure(path, err, std)
	}
	if len(state.Entries) == 0 {
		fmt.Fprintf(std.Out, "  nothing to give back: wrap keeps no originals of it (%s)\n", state.path)
		return true
	}
	data, entries, err := readHostFile(path)
	if err != nil {
		return fileFailure(path, err, std)
	}
	note := entryNotes(std)
	out, ok := data, true
	daemons := map[string]*daemonEdit{}
	for _, r := range state.Entries {
		i := slices.IndexFunc(entries, func(e hostconfig.Entry) bool { return e.Section == r.Section && e.Name == r.Name })
		switch {
		case i < 0:
			note(r.Name, "no longer in the file: nothing to give back")
		case string(entries[i].Raw) == r.Wrapped:
			next, err := hostconfig.ReplaceEntry(out, r.Section, r.Name, []byte(r.Original))
			if err != nil {
				note(r.Name, "not given back: %v", err)
				ok = false
				continue
			}
			out = next
			note(r.Name, "given back")
		case entries[i].Kind == hostconfig.Wrapped:
			orig, err := originalEntry(r)
			if err == nil {
				out, err = hostconfig.SetLaunch(out, r.Section, r.Name, orig.Command, orig.Args)
			}
			if err != nil {
				note(r.Name, "not given back: %v", err)
				ok = false
				continue
			}
			note(r.Name, "given back its command and args; the rest of the entry, edited since, is kept")
		default:
			note(r.Name, "changed since, and no longer runs through mcpsandbox: left as it is")
		}
		if r.Daemon != "" {
			d := daemons[r.Daemon]
			if d == nil {
				d = &daemonEdit{path: r.Daemon}
				if err := d.load(); err != nil {
					note(r.Name, "still in the daemon's %s: %v", r.Daemon, err)
					ok = false
					continue
				}
				daemons[r.Daemon] = d
			}
			if d.remove(r.Name) {
				note(r.Name, "taken out of the daemon's %s", r.Daemon)
			}
		}
	}
	if o.dryRun {
		writeDiff(std.Out, path, data, out)
		for _, d := range daemons {
			if d.changed() {
				writeDiff(std.Out, d.path, d.before, d.data)
			}
		}
		return ok
	}
	for _, d := range daemons {
		if d.changed() {
			if err := writeConfig(d.path, d.data); err != nil {
				fileFailure(d.path, err, std)
				ok = false
				continue
			}
			reloadDaemonsOf(d.path, std)
		}
	}
	if !bytes.Equal(out, data) {
		if err := writeConfig(path, out); err != nil {
			return fileFailure(path, err, std)
		}
	}
	if ok {
		if err := os.Remove(state.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fileFailure(state.path, err, std)
		}
	}
	return ok
}

func originalEntry(r wrapRecord) (hostconfig.Entry, error) {
	doc := fmt.Appendf(nil, `{"mcpServers": {"x": %s}}`, r.Original)
	entries, err := hostconfig.Entries(doc)
	if err != nil || len(entries) != 1 {
		return hostconfig.Entry{}, fmt.Errorf("the original kept in the wrap file does not read: %v", err)
	}
	return entries[0], nil
}

// readHostFile is the file at path and its server entries.
func readHostFile(path string) ([]byte, []hostconfig.Entry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	entries, err := hostconfig.FileEntries(path, data)
	return data, entries, err
}

// entryNotes prints wrap's line about one entry of a file.
func entryNotes(std stdio) func(name, format string, a ...any) {
	return func(name, format string, a ...any) {
		fmt.Fprintf(std.Out, "  %s: %s\n", name, fmt.Sprintf(format, a...))
	}
}

func fileFailure(path string, err error, std stdio) bool {
	fmt.Fprintf(std.Err, "mcpsandbox wrap: %s: %v\n", path, err)
	return false
}

// needsPrepare: npx and uvx fetch packages at start, which a confined
// server cannot.
func needsPrepare(launch []string) bool {
	return slices.Contains([]string{"npx", "uvx"}, filepath.Base(launch[0]))
}

// prepareEntry runs prepare's code path for the launch line of file's
// entry name, as run will start it on host, with one progress line on
// std.Err.
func prepareEntry(file, name string, flags, env, line []string, host launch.Host, std stdio) error {
	fmt.Fprintf(std.Err, "mcpsandbox wrap: preparing %s (%s) ...\n", name, cmdline.ShellJoin(line))
	var out, errs bytes.Buffer
	code, failed := prepare(append(slices.Clone(flags), runArgs(env, line)...), host, stdio{In: strings.NewReader(""), Out: &out, Err: &errs})
	if code != exitOK {
		fmt.Fprintf(std.Err, "mcpsandbox wrap: preparing %s failed:\n%s", name, errs.String())
		if failed != nil && len(failed.once.Refused) > 0 {
			return fmt.Errorf("preparing it failed: %s; once it is prepared, %s wraps it", failed, cmdline.ShellJoin([]string{"mcpsandbox", "wrap", "--no-prepare", file}))
		}
		return fmt.Errorf("preparing it failed (%s)", finalLine(errs.String()))
	}
	fmt.Fprintf(std.Err, "mcpsandbox wrap: prepared %s\n", name)
	return nil
}

// finalLine is prepare's reason: its last message, else its last line.
func finalLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if reason, ok := strings.CutPrefix(lines[i], "mcpsandbox prepare: "); ok {
			return reason
		}
	}
	return lines[len(lines)-1]
}

// runArgs are run's (and prepare's) arguments for the launch line, passing
// the variables named.
func runArgs(env, launch []string) []string {
	var args []string
	for _, name := range env {
		args = append(args, "--env", name)
	}
	return append(append(args, "--"), launch...)
}

// entryEnv are the variables the host gives the server, its env's then
// those of its envFile (when wrap can read that), by name and with the
// values wrap knows: those that need no expanding by the host.
func entryEnv(file string, e hostconfig.Entry) (names []string, values map[string]string, warning string) {
	names, values = slices.Clone(e.Env), map[string]string{}
	keep := func(name, v string) {
		if _, seen := values[name]; !seen && !strings.Contains(v, "${") {
			values[name] = v
		}
	}
	for name, v := range e.EnvValue {
		keep(name, v)
	}
	if e.EnvFile == "" {
		return names, values, ""
	}
	path := e.EnvFile
	home, _ := os.UserHomeDir()
	if dir := filepath.Dir(file); filepath.Base(dir) == ".vscode" || filepath.Base(dir) == ".cursor" {
		path = strings.ReplaceAll(path, "${workspaceFolder}", filepath.Dir(dir))
	}
	path = strings.ReplaceAll(path, "${userHome}", home)
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		path = filepath.Join(home, rest)
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(file), path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return names, values, fmt.Sprintf("its envFile %s could not be read (%v): the variables in it will not reach the server; add them to its env", e.EnvFile, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "export "))
		name, v, found := strings.Cut(line, "=")
		name = strings.TrimSpace(name)
		if !found || name == "" || strings.HasPrefix(name, "#") || slices.Contains(names, name) {
			continue
		}
		names = append(names, name)
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		keep(name, v)
	}
	return names, values, ""
}

// daemonEdit is wrap --daemon's change to the daemon's file.
type daemonEdit struct {
	path         string
	before, data []byte
}

func (d *daemonEdit) load() error {
	data, err := os.ReadFile(d.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		data = []byte("{\n  \"mcpServers\": {}\n}\n")
		d.before = []byte{}
	case err != nil:
		return err
	default:
		d.before = data
		if _, err := config.Parse(d.path, data); err != nil {
			return fmt.Errorf("the daemon's configuration: %v", err)
		}
	}
	d.data = data
	return nil
}

func (d *daemonEdit) changed() bool { return d.data != nil && !bytes.Equal(d.before, d.data) }

// add adds e's server, started by launch; false when the daemon's file has
// it already, the same.
func (d *daemonEdit) add(e hostconfig.Entry, launch []string) (bool, error) {
	raw, err := hostconfig.KeepMembers(e.Raw, daemonKeys)
	if err != nil {
		return false, err
	}
	if !slices.Equal(launch, append([]string{e.Command}, e.Args...)) {
		if raw, err = entryLaunch(raw, launch); err != nil {
			return false, err
		}
	}
	have, err := hostconfig.Entries(d.data)
	if err != nil {
		return false, err
	}
	if i := slices.IndexFunc(have, func(h hostconfig.Entry) bool { return h.Name == e.Name }); i >= 0 {
		if bytes.Equal(compact(have[i].Raw), compact(raw)) {
			return false, nil
		}
		return false, fmt.Errorf("the daemon's %s has another server %s: rename one of the two", d.path, e.Name)
	}
	next, err := hostconfig.AddEntry(d.data, e.Name, raw, e.Indent)
	if err != nil {
		return false, err
	}
	if _, err := config.Parse(d.path, next); err != nil {
		return false, fmt.Errorf("the daemon could not run it: %v", err)
	}
	d.data = next
	return true, nil
}

func (d *daemonEdit) remove(name string) bool {
	have, err := hostconfig.Entries(d.data)
	if err != nil {
		return false
	}
	i := slices.IndexFunc(have, func(h hostconfig.Entry) bool { return h.Name == name })
	if i < 0 {
		return false
	}
	next, err := hostconfig.RemoveEntry(d.data, have[i].Section, name)
	if err != nil {
		return false
	}
	d.data = next
	return true
}

// compact is raw without its blanks outside strings, to compare entries.
func compact(raw []byte) []byte {
	var b bytes.Buffer
	inString, escaped := false, false
	for _, c := range raw {
		switch {
		case escaped:
			escaped = false
		case inString:
			escaped = c == '\\'
			inString = c != '"'
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		}
		b.WriteByte(c)
	}
	return b.Bytes()
}

// entryLaunch is the raw entry with its command and args made launch's,
// every other byte kept.
func entryLaunch(raw []byte, launch []string) ([]byte, error) {
	doc := fmt.Appendf(nil, `{"mcpServers": {"x": %s}}`, raw)
	doc, err := hostconfig.SetLaunch(doc, "mcpServers", "x", launch[0], launch[1:])
	if err != nil {
		return nil, err
	}
	entries, err := hostconfig.Entries(doc)
	if err != nil || len(entries) != 1 {
		return nil, fmt.Errorf("the entry with its exact version does not read: %v", err)
	}
	return entries[0].Raw, nil
}
