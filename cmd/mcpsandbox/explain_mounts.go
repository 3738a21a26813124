package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/resolve"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
)

// mountLines are the sandbox's mounts (sandbox.Describe): first what it
// shows of the host's files, each with who asked for it, then its own.
func (e explanation) mountLines() []string {
	var grants, own []string
	for _, m := range e.d.Mounts {
		mode := "ro"
		if m.Writable {
			mode = "rw"
		}
		switch m.Kind {
		case sandbox.System:
			name := m.Path
			if m.Path == e.d.Home {
				name += " (HOME)"
			}
			own = append(own, name+": "+m.What)
		case sandbox.Tmpfs:
			grants = append(grants, fmt.Sprintf("%-5s %s  (%s, %s)", "tmpfs", cmdline.ShellWord(m.Path), e.tmpfsSource(m.Path), strings.TrimPrefix(m.What, "private tmpfs, ")))
		case sandbox.State:
			grants = append(grants, fmt.Sprintf("%-5s %s  (the state directory)", mode, cmdline.ShellWord(m.Path)))
		case sandbox.Program:
			grants = append(grants, fmt.Sprintf("%-5s %s  (the program itself)", mode, cmdline.ShellWord(m.Path)))
		case sandbox.Pinned:
			grants = append(grants, fmt.Sprintf("%-5s %s  (%s)", "pin", cmdline.ShellWord(m.Path), m.What))
		case sandbox.Masked:
			grants = append(grants, fmt.Sprintf("%-5s %s  (a unix socket in a grant: masked, connecting is refused)", "mask", cmdline.ShellWord(m.Path)))
		default:
			line := fmt.Sprintf("%-5s %s  %s", mode, cmdline.ShellWord(m.Path), e.grantReason(m))
			if m.What != "" {
				line += " — " + m.What // whose files the server is shown as its own
			}
			grants = append(grants, line)
		}
	}
	if len(grants) == 0 {
		grants = append(grants, "no files of the host")
	}
	if cut := e.d.SocketSearchCut; cut != "" {
		grants = append(grants, "unix sockets in the grants: "+cut+" (sockets there stay reachable)")
	}
	switch wd := e.d.WorkDir; {
	case wd == e.d.Home:
		own = append(own, "working directory: HOME")
	case e.d.WorkDirEmpty:
		own = append(own, "working directory: "+wd+" (empty: no grant holds it)")
	default:
		own = append(own, "working directory: "+wd+" (in a grant)")
	}
	return append(grants, own...)
}

// grantReason says who asked for the grant m, and what automatic grants
// it stands in for.
func (e explanation) grantReason(m sandbox.Mount) string {
	for _, g := range e.r.Grants {
		if filepath.Clean(g.Path) != m.Path || g.Writable != m.Writable {
			continue
		}
		why := "(" + e.askers(g) + ")"
		for _, c := range g.Covers {
			why += " — covers " + e.covered(c, g)
		}
		return why
	}
	return "(" + policy.KeyOf(listField(m.Writable)) + ")"
}

func (e explanation) tmpfsSource(path string) string {
	for _, t := range e.r.Overrides.Tmpfs {
		if e.r.Given["Tmpfs"] && filepath.Clean(t) == path {
			return flagOf("Tmpfs")
		}
	}
	return policy.KeyOf("Tmpfs")
}

// askers says who asked for g, each once.
func (e explanation) askers(g resolve.Grant) string {
	field := listField(g.Writable)
	var why []string
	for _, s := range g.From {
		var w string
		switch s.Kind {
		case resolve.Given:
			w = flagOf(field)
		case resolve.Launch:
			w = s.Name
		case resolve.Builtin:
			if g.Path == e.r.Launch.Project {
				w = "the script's project, ${PROJECT}"
				break
			}
			fallthrough
		default:
			w = policy.KeyOf(field)
		}
		if !slices.Contains(why, w) {
			why = append(why, w)
		}
	}
	return strings.Join(why, "; ")
}

// listField is the Policy field of a read-only or read-write grant.
func listField(writable bool) string {
	if writable {
		return "ReadWrite"
	}
	return "ReadOnly"
}

// covered says which automatic grant c the user's grant g stands in for.
func (e explanation) covered(c, g resolve.Grant) string {
	mode := "read-only"
	if c.Writable {
		mode = "read-write"
	}
	var what string
	switch s := c.From[0]; {
	case s.Kind == resolve.Launch:
		what = s.Name
	case c.Path == e.r.Launch.Project:
		what = "the script's project"
	default:
		what = s.Name + "'s " + policy.KeyOf(listField(c.Writable))
	}
	s := "the automatic " + mode + " grant of " + what
	if c.Path != g.Path {
		s += ", " + cmdline.ShellWord(c.Path)
	}
	return s
}
