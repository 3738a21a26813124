package policy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Vars are the values of the variables a policy file may use in path and
// environment values. The caller supplies them: policy reads nothing of the
// process it runs in.
type Vars struct {
	Home    string   // ${HOME}
	WorkDir string   // ${PWD}: the working directory
	Args    []string // ${ARGS}, ${ARG1}...: the server's arguments, its program left out
	// ServerArgs are the server's own arguments, after a launcher's or
	// interpreter's (npx's flags and package): ${ARG_HOSTS} reads the
	// URLs among them.
	ServerArgs []string
	// NoArgs: there is no launch line (policy check), so the arguments
	// are unknown: a list item using one yields nothing, and in any other
	// value one expands to nothing.
	NoArgs  bool
	State   string // ${STATE}: the server's state directory (state.dir)
	Project string // ${PROJECT}: the project the server's script belongs to ("" = none)
	// none, when not "", refuses every variable and says why: where the
	// values they stand for are not known yet (DecodeInline).
	none string
}

const (
	stateVar    = "STATE"
	argHostsVar = "ARG_HOSTS"
)

// errArgUnknown: an argument NoArgs leaves unknown (never returned).
var errArgUnknown = errors.New("the server's arguments are not known here")

var varNames = []string{"HOME", "PWD", "ARGS", "ARG1", argHostsVar, stateVar, "PROJECT"}

// expandItem expands one list item: "${ARGS}" alone stands for every
// argument, so it may yield any number of items.
func (v Vars) expandItem(s string) ([]string, error) {
	if v.none != "" {
		out, err := v.expand(s)
		return []string{out}, err
	}
	switch s {
	case "${ARGS}":
		return append([]string(nil), v.Args...), nil
	case "${PROJECT}":
		if v.Project == "" {
			return nil, nil
		}
	}
	out, unknown, err := v.expandAll(s)
	if unknown {
		return nil, err
	}
	return []string{out}, err
}

// expand replaces ${NAME} by its value and $$ by $; any other $ stays.
func (v Vars) expand(s string) (string, error) {
	out, _, err := v.expandAll(s)
	return out, err
}

// expandAll is expand that also says whether s used an argument that
// NoArgs leaves unknown.
func (v Vars) expandAll(s string) (_ string, unknownArg bool, _ error) {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 || i == len(s)-1 {
			b.WriteString(s)
			return b.String(), unknownArg, nil
		}
		b.WriteString(s[:i])
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			s = s[i+2:]
			continue
		case '{':
		default:
			b.WriteByte('$')
			s = s[i+1:]
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", false, fmt.Errorf("%q has an unclosed ${: close it with }, or write $$ for a literal $", s[i:])
		}
		val, err := v.lookup(s[i+2 : i+end])
		if errors.Is(err, errArgUnknown) {
			unknownArg, err = true, nil
		}
		if err != nil {
			return "", false, err
		}
		b.WriteString(val)
		s = s[i+end+1:]
	}
}

func (v Vars) lookup(name string) (string, error) {
	if v.none != "" {
		return "", fmt.Errorf("${%s}: %s", name, v.none)
	}
	switch name {
	case "HOME", "PWD":
		val := v.Home
		if name == "PWD" {
			val = v.WorkDir
		}
		if val == "" {
			return "", fmt.Errorf("${%s} is not known here", name)
		}
		return val, nil
	case "ARGS":
		return "", fmt.Errorf("${ARGS} stands for every argument, a list: use it as a list item of its own, or ${ARG1}, ${ARG2}... for one")
	case stateVar:
		if v.State == "" {
			return "", fmt.Errorf("${STATE} is not known here")
		}
		return v.State, nil
	case argHostsVar:
		return "", fmt.Errorf("${ARG_HOSTS} stands for the hosts of the server's URL arguments, a list: use it as an item of its own of network.allow-hosts or network.deny-hosts")
	case "PROJECT":
		// Empty when there is none: an item of its own then yields nothing.
		return v.Project, nil
	}
	if n, ok := strings.CutPrefix(name, "ARG"); ok {
		i, err := strconv.Atoi(n)
		switch {
		case err != nil || i < 1:
			return "", fmt.Errorf("${%s} is no argument: they count from ${ARG1}", name)
		case v.NoArgs:
			return "", errArgUnknown
		case i > len(v.Args):
			return "", fmt.Errorf("${%s}: the server has %d arguments", name, len(v.Args))
		}
		return v.Args[i-1], nil
	}
	msg := fmt.Sprintf("unknown variable ${%s}: ", name)
	if guess := closest(name, varNames); guess != "" {
		return "", fmt.Errorf("%sdid you mean ${%s}?", msg, guess)
	}
	return "", fmt.Errorf("%suse ${HOME}, ${PWD}, ${STATE}, ${PROJECT}, ${ARGS} or ${ARG1}, ${ARG2}..., or write $$ for a literal $", msg)
}

// expandHost expands one item of a host list, where only the arguments
// mean anything: ${ARG1}, ${ARG2}... within a spec, and ${ARG_HOSTS} as an
// item of its own, the hosts of every URL among the server's own
// arguments (URLHosts). unknown: the arguments are not known here
// (NoArgs), and the item yields nothing.
func (v Vars) expandHost(s string) (specs []string, unknown bool, err error) {
	if v.none != "" {
		out, err := v.expand(s)
		return []string{out}, false, err
	}
	if s == "${"+argHostsVar+"}" {
		if v.NoArgs {
			return nil, true, nil
		}
		for _, a := range v.ServerArgs {
			hosts, _, err := URLHosts(a)
			if err != nil {
				return nil, false, fmt.Errorf("${ARG_HOSTS}: %v", err)
			}
			specs = append(specs, hosts...)
		}
		return specs, false, nil
	}
	for rest := s; ; {
		i := strings.Index(rest, "${")
		if i < 0 {
			break
		}
		end := strings.IndexByte(rest[i:], '}')
		if end < 0 {
			break // expandAll says what is wrong
		}
		name := rest[i+2 : i+end]
		if n, ok := strings.CutPrefix(name, "ARG"); !ok || n == "S" || n == "_HOSTS" {
			return nil, false, fmt.Errorf("${%s} in a host: only ${ARG1}, ${ARG2}... are expanded within one, and ${ARG_HOSTS} as an item of its own", name)
		}
		rest = rest[i+end+1:]
	}
	out, unknown, err := v.expandAll(s)
	if unknown || err != nil {
		return nil, unknown, err
	}
	return []string{out}, false, nil
}
