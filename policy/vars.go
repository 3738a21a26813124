package policy

import (
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
	State   string   // ${STATE}: the server's state directory (state.dir)
	Project string   // ${PROJECT}: the project the server's script belongs to ("" = none)
}

const stateVar = "STATE"

var varNames = []string{"HOME", "PWD", "ARGS", "ARG1", stateVar, "PROJECT"}

// expandItem expands one list item: "${ARGS}" alone stands for every
// argument, so it may yield any number of items.
func (v Vars) expandItem(s string) ([]string, error) {
	switch s {
	case "${ARGS}":
		return append([]string(nil), v.Args...), nil
	case "${PROJECT}":
		if v.Project == "" {
			return nil, nil
		}
	}
	out, err := v.expand(s)
	return []string{out}, err
}

// expand replaces ${NAME} by its value and $$ by $; any other $ stays.
func (v Vars) expand(s string) (string, error) {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 || i == len(s)-1 {
			b.WriteString(s)
			return b.String(), nil
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
			return "", fmt.Errorf("%q has an unclosed ${: close it with }, or write $$ for a literal $", s[i:])
		}
		val, err := v.lookup(s[i+2 : i+end])
		if err != nil {
			return "", err
		}
		b.WriteString(val)
		s = s[i+end+1:]
	}
}

func (v Vars) lookup(name string) (string, error) {
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
	case "PROJECT":
		// Empty when there is none: an item of its own then yields nothing.
		return v.Project, nil
	}
	if n, ok := strings.CutPrefix(name, "ARG"); ok {
		i, err := strconv.Atoi(n)
		switch {
		case err != nil || i < 1:
			return "", fmt.Errorf("${%s} is no argument: they count from ${ARG1}", name)
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
