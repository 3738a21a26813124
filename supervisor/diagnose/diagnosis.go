package diagnose

import (
	"fmt"
	"os"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// Kind is what kept the server from working.
type Kind uint8

const (
	NotGranted    Kind = iota + 1 // a path that exists on the host is not granted (or not readable there)
	Denied                        // a granted path the server's unprivileged user may not enter or read
	ReadOnlyGrant                 // a write into a read-only grant, or outside every writable one
	Offline                       // a package download failed: the sandbox has no network
	EnvMissing                    // a variable the server needs is not in its environment
	ScriptMissing                 // the script the command runs does not exist, on the host either
)

// Diagnosis is what went wrong and which setting fixes it. Render gives
// the message; the other fields are for deciding and testing.
type Diagnosis struct {
	Kind Kind
	// Path is what the server named: a path, the URL it could not fetch
	// (Offline) or the variable it lacks (EnvMissing).
	Path string
	// Setting is the policy field whose change fixes it (Command for
	// ScriptMissing: the command line is wrong).
	Setting string
	// Permanent says restarting the server cannot help: the relay stops it
	// at once instead of going through a crash loop. Every start failure
	// diagnosed is; a tool error's diagnosis is not (the server runs on).
	Permanent bool

	real      string      // NotGranted: Path is a symbolic link to real, which is not granted
	grantDir  string      // NotGranted: what to grant
	grant     string      // ReadOnlyGrant: the read-only grant Path lies in ("" none); Denied of a tool error: its grant
	named     string      // a tool error's path lies in this path the command line names, not granted
	stateEnv  string      // ReadOnlyGrant: the variable that moves this server's state, and
	stateFile string      // the file's usual name
	dir       string      // Denied: the directory that keeps the user out
	mode      os.FileMode // its mode
	final     bool        // dir is Path itself (it needs reading, not passing through)
	net       string      // Offline: the Net setting and
	netHost   string      // the value that gives the host's network
	egress    bool        // the network is egress: only named hosts
	command   string      // the command line, joined
	env       envState    // EnvMissing
	arg       string      // ScriptMissing: the command's argument, when relative
	workDir   string      // and the directory it is taken from
}

// envState says where a variable the server needs was lost.
type envState uint8

const (
	envUnset     envState = iota + 1 // neither the policy nor mcpsandbox has it
	envNotPassed                     // mcpsandbox has it; the policy does not pass it on
	envNotHere                       // the policy passes it on; mcpsandbox has none
)

// Render writes the diagnosis with settings named by setting (as the user
// knows them, e.g. --ro) and, where a policy file would name the setting
// otherwise, fileKey (e.g. policy.KeyOf: filesystem.ro).
func (d Diagnosis) Render(setting, fileKey field.Namer) string {
	hint := func(f string) string {
		if k := fileKey(f); setting(f) != k {
			return " (or " + k + " in a policy file)"
		}
		return ""
	}
	switch d.Kind {
	case NotGranted:
		what := "it exists on the host but is not granted to the server"
		if d.named != "" {
			what = "it lies in " + d.named + ", which the command line names but the policy does not grant (the server sees only its grants)"
		}
		if d.real != "" {
			what = "it is a symbolic link to " + d.real + ", which is not granted to the server"
		}
		return fmt.Sprintf("the server could not open %s: %s; grant it with %s %s%s",
			d.Path, what, setting("ReadOnly"), d.grantDir, hint("ReadOnly"))
	case ReadOnlyGrant:
		where := "it is not in a writable grant"
		if d.grant != "" {
			where = "it lies in " + d.grant + ", granted read-only (" + setting("ReadOnly") + ")"
		}
		if d.named != "" {
			return fmt.Sprintf("the server could not write %s: it lies in %s, which the command line names but the policy does not grant; grant it writable with %s %s%s",
				d.Path, d.named, setting("ReadWrite"), d.named, hint("ReadWrite"))
		}
		fix := fmt.Sprintf("grant a writable directory with %s DIR%s and have the server write there", setting("ReadWrite"), hint("ReadWrite"))
		if d.stateEnv != "" {
			fix += fmt.Sprintf(" (this server takes it from %s: %s %s=DIR/%s)", d.stateEnv, setting("Env"), d.stateEnv, d.stateFile)
		} else {
			fix += fmt.Sprintf(" (servers commonly take the path from an environment variable: %s NAME=DIR/FILE)", setting("Env"))
		}
		return fmt.Sprintf("the server could not write %s: %s; %s", d.Path, where, fix)
	case Denied:
		if d.dir == "" {
			return fmt.Sprintf("the server could not open %s: it lies in %s, which is granted, but the server runs as an unprivileged user of its own, to whom the host's permissions apply as to any other user; let others read it on the host or run the server as its owner with %s NAME",
				d.Path, d.grant, setting("User"))
		}
		perm := map[bool]string{true: "r", false: "x"}[d.final]
		return fmt.Sprintf("the server could not open %s: it is granted, but %s (mode %#o) keeps the server's unprivileged user out; let others in (chmod o+%s %s) or run the server as its owner with %s NAME",
			d.Path, d.dir, d.mode, perm, d.dir, setting("User"))
	case Offline:
		if d.egress {
			return fmt.Sprintf("the server needed the network (%s failed) but egress reaches only the hosts the policy names (%s): fetch its packages once with `mcpsandbox prepare -- %s`, or name the host it needs with %s HOST",
				d.Path, setting("AllowHosts"), d.command, setting("AllowHosts"))
		}
		return fmt.Sprintf("the server needed the network (%s failed) but the sandbox has none (%s %s): fetch what it needs once with `mcpsandbox prepare -- %s`, or give it the network with %s %s",
			d.Path, setting("Net"), d.net, d.command, setting("Net"), d.netHost)
	case EnvMissing:
		switch d.env {
		case envNotPassed:
			return fmt.Sprintf("the server needs the environment variable %s, which mcpsandbox has but does not pass on: pass it with %s %s", d.Path, setting("Env"), d.Path)
		case envNotHere:
			return fmt.Sprintf("the server needs the environment variable %s, which the policy passes on but mcpsandbox's own environment lacks: set it where the host starts mcpsandbox (its \"env\" for this server)", d.Path)
		}
		return fmt.Sprintf("the server needs the environment variable %s, which is not set: set it where the host starts mcpsandbox (its \"env\" for this server) and pass it with %s %s", d.Path, setting("Env"), d.Path)
	case ScriptMissing:
		msg := fmt.Sprintf("the server's script %s does not exist, on the host either: correct its path in the command (%s)", d.Path, setting("Command"))
		if d.arg != "" {
			msg += fmt.Sprintf("; %s is taken from the working directory %s (%s)", d.arg, d.workDir, setting("WorkDir"))
		}
		return msg
	}
	return ""
}

// String renders the diagnosis with the settings named as fields.
func (d Diagnosis) String() string { return d.Render(field.Plain, field.Plain) }

// knownStateEnv names, for servers known to keep their state beside their
// code, the environment variable that moves it, and the file's usual name.
func knownStateEnv(path string) (env, file string) {
	for _, k := range []struct{ pkg, env, file string }{
		{"/@modelcontextprotocol/server-memory/", "MEMORY_FILE_PATH", "memory.jsonl"},
	} {
		if strings.Contains(path, k.pkg) {
			return k.env, k.file
		}
	}
	return "", ""
}
