package launch

import (
	"errors"
	"os/exec"
	"slices"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/pathrule"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Launch is a launch line read on this host.
type Launch struct {
	Given   []string // the launch line as given
	Command []string // what to start confined: the interpreter behind a shim put first
	Name    string   // the server's name (logs, its cgroup, audit lines): the package, scope kept
	NameWhy string   // which part of the launch line names it and its state directory (name.go)
	ID      string   // who it is: its state directory's name (npm+@playwright+mcp), the key of its entry in the lock
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
	line       line   // what parseLine read of Given
	family     string // the program's family (npx, uvx, node, python3, or its name)
	formerDir  string // where an earlier mcpsandbox kept the state (former.go)
}

// Read reads cmd on host h; matches are the built-ins' match sections.
// A program that cannot be found is not an error here: the start reports
// it as it always has.
func Read(cmd []string, matches []policy.Match, h Host) Launch {
	l := Launch{Given: slices.Clone(cmd), Command: slices.Clone(cmd), home: h.Home}
	if len(cmd) == 0 {
		id := identify(cmd, "", line{}, h, Runtime{}, "")
		l.Name, l.NameWhy, l.ID, l.StateDir = id.name, id.why, id.state, stateDir(id.state, h)
		// No launch line (policy check): the variables it does not set.
		l.Choice = Choose(cmd, matches, h)
		l.Vars = policy.Vars{Home: h.Home, WorkDir: h.WorkDir, State: l.StateDir, NoArgs: true}
		return l
	}
	fam, ln := parseLine(cmd)
	l.Choice, l.line, l.family = choose(cmd, fam, ln, matches, h), ln, fam
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
	id := identify(cmd, fam, ln, h, l.Runtime, l.Project)
	l.Name, l.NameWhy, l.ID, l.StateDir = id.name, id.why, id.state, stateDir(id.state, h)
	l.formerDir = stateDir(formerStateName(cmd, ln), h)
	own := serverArgs(cmd, ln)
	l.argPaths, l.argErr = argPaths(own, h)
	l.Vars = policy.Vars{Home: h.Home, WorkDir: h.WorkDir, Args: slices.Clone(cmd[1:]), ServerArgs: slices.Clone(own), State: l.StateDir, Project: l.Project}
	return l
}

// Apply adds to p what this launch line needs under any policy: Grants
// and Finish. Nothing for an unconfined server, which sees the host as it
// is.
func (l Launch) Apply(p *policy.Policy) error {
	grants, err := l.Grants(*p)
	if err != nil {
		return err
	}
	l.Finish(p)
	for _, g := range grants {
		if g.Writable {
			p.ReadWrite = addPath(p.ReadWrite, g.Path)
		} else {
			p.ReadOnly = addPath(p.ReadOnly, g.Path)
		}
	}
	return nil
}

// Grant is a host path a launch line needs visible, and what for.
type Grant struct {
	Path     string
	Writable bool
	Why      string // e.g. "the program's installation", "an argument, grant-args rw"
}

// Grants are the host paths this launch line needs under p: the
// program's installation read-only (Runtime.Roots), and the paths among
// the arguments as p.GrantArgs says. None for an unconfined server.
func (l Launch) Grants(p policy.Policy) ([]Grant, error) {
	if p.Unconfined {
		return nil, nil
	}
	var grants []Grant
	for _, r := range l.Runtime.Roots {
		grants = append(grants, Grant{Path: r, Why: l.Runtime.What(r)})
	}
	switch p.GrantArgs {
	case policy.GrantRO, policy.GrantRW:
		if l.argErr != nil {
			return nil, l.argErr
		}
		why := "an argument, grant-args " + p.GrantArgs
		for _, a := range l.argPaths {
			if p.GrantArgs == policy.GrantRO {
				grants = append(grants, Grant{Path: a, Why: why})
			} else {
				grants = append(grants, Grant{Path: writable(a, l.home), Writable: true, Why: why})
			}
		}
	}
	return grants, nil
}

// Finish sets in p the rest of what this launch line needs: the command
// to start (the interpreter behind a shim first), the runtime's bin first
// on PATH, the state directory's variable.
func (l Launch) Finish(p *policy.Policy) {
	if p.Unconfined {
		p.Command = slices.Clone(l.Given)
		return
	}
	p.Command = slices.Clone(l.Command)
	if l.Runtime.Bin != "" && !setsEnv(p.Env, "PATH") {
		p.Env = append(p.Env, "PATH="+l.Runtime.Bin+":"+pathrule.ServerPATH)
	}
	if p.State && p.StateEnv != "" && l.StateDir != "" && !setsEnv(p.Env, p.StateEnv) {
		p.Env = append(p.Env, p.StateEnv+"="+l.StateDir)
	}
}

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
