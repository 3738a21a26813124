package launch

import (
	"errors"
	"os/exec"
	"slices"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Launch is a launch line read on this host.
type Launch struct {
	Given   []string // the launch line as given
	Command []string // what to start confined: the interpreter behind a shim put first
	Name    string   // the server's name (logs, its cgroup, its state directory)
	Choice  Choice   // the built-in that fits, for when no policy is given
	Runtime Runtime
	// RuntimeErr says why the program, found, could not be resolved (a
	// version manager's shim that names no interpreter): Command then
	// keeps it as given, which the sandbox is unlikely to run.
	RuntimeErr error
	Project    string // ${PROJECT}
	StateDir   string // ${STATE}: where the state directory is when the policy turns it on
	Vars       policy.Vars
	argPaths   []string
	argErr     error
	home       string
	line       line // what parseLine read of Given
}

// Read reads cmd on host h; matches are the built-ins' match sections.
// A program that cannot be found is not an error here: the start reports
// it as it always has.
func Read(cmd []string, matches []policy.Match, h Host) Launch {
	l := Launch{Given: slices.Clone(cmd), Command: slices.Clone(cmd), Name: policy.ServerName(cmd), home: h.Home}
	l.StateDir = stateDir(l.Name, h)
	if len(cmd) == 0 {
		// No launch line (policy check): the variables it does not set.
		l.Choice = Choose(cmd, matches, h)
		l.Vars = policy.Vars{Home: h.Home, WorkDir: h.WorkDir, State: l.StateDir, NoArgs: true}
		return l
	}
	fam, ln := parseLine(cmd)
	l.Choice, l.line = choose(cmd, fam, ln, matches, h), ln
	rt, err := resolveRuntime(cmd[0], h)
	switch {
	case err == nil:
		l.Runtime = rt
		if rt.Shim != "" {
			l.Command[0] = rt.Exe
		}
	case !errors.Is(err, exec.ErrNotFound):
		l.RuntimeErr = err
	}
	if ln.script != "" {
		l.Project = projectOf(absPath(h.WorkDir, ln.script), fam, h)
	}
	l.argPaths, l.argErr = argPaths(serverArgs(cmd, ln), h)
	l.Vars = policy.Vars{Home: h.Home, WorkDir: h.WorkDir, Args: slices.Clone(cmd[1:]), State: l.StateDir, Project: l.Project}
	return l
}

// Apply adds to p what this launch line needs under any policy: the
// interpreter's installation (read-only, its bin first on PATH), and the
// paths among the arguments as p.GrantArgs says. Nothing for an
// unconfined server, which sees the host as it is.
func (l Launch) Apply(p *policy.Policy) error {
	if p.Unconfined {
		p.Command = slices.Clone(l.Given)
		return nil
	}
	p.Command = slices.Clone(l.Command)
	for _, r := range l.Runtime.Roots {
		p.ReadOnly = addPath(p.ReadOnly, r)
	}
	if l.Runtime.Bin != "" && !setsEnv(p.Env, "PATH") {
		p.Env = append(p.Env, "PATH="+l.Runtime.Bin+":"+serverPath)
	}
	switch p.GrantArgs {
	case policy.GrantRO, policy.GrantRW:
		if l.argErr != nil {
			return l.argErr
		}
		for _, a := range l.argPaths {
			if p.GrantArgs == policy.GrantRO {
				p.ReadOnly = addPath(p.ReadOnly, a)
			} else {
				p.ReadWrite = addPath(p.ReadWrite, writable(a, l.home))
			}
		}
	}
	if p.State && p.StateEnv != "" && l.StateDir != "" && !setsEnv(p.Env, p.StateEnv) {
		p.Env = append(p.Env, p.StateEnv+"="+l.StateDir)
	}
	return nil
}

// serverPath is the PATH the sandbox gives a server, sandbox.DefaultPath
// (Spec.Env replaces it whole), which a runtime's bin precedes; launch
// may not import sandbox, so a test holds the two equal.
const serverPath = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"

// setsEnv: env sets name, or passes it from mcpsandbox's own (a bare NAME).
func setsEnv(env []string, name string) bool {
	return slices.ContainsFunc(env, func(e string) bool { return e == name || strings.HasPrefix(e, name+"=") })
}

func addPath(list []string, p string) []string {
	if slices.Contains(list, p) {
		return list
	}
	return append(list, p)
}
