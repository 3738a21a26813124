package launch

import (
	"errors"
	"path/filepath"
)

// Prepare is the step that fills a server's package cache once, with the
// network, so that its runs need none: npx and uvx fetch the packages of
// the launch line, as the same versions, and run nothing of them.
type Prepare struct {
	Command []string
	Env     []string // set over the policy's: the cache is filled online
}

// ErrNothingToPrepare: the launch line fetches nothing when it starts.
var ErrNothingToPrepare = errors.New("nothing to prepare: only npx and uvx launch lines fetch packages when they start")

// PrepareStep returns the prepare step of the launch line.
func (l Launch) PrepareStep() (Prepare, error) {
	if len(l.Command) == 0 {
		return Prepare{}, ErrNothingToPrepare
	}
	ln := l.line
	switch family(filepath.Base(l.Given[0])) {
	case "npx":
		if ln.refuse != "" || len(ln.specs) == 0 {
			return Prepare{}, errors.New("cannot prepare this npx line: " + ln.refuse)
		}
		cmd := []string{l.Command[0], "--yes"}
		for _, s := range ln.specs {
			cmd = append(cmd, "--package="+s)
		}
		// true exits at once: npx installs the packages first. Install
		// scripts run in the foreground, so that what one says when it
		// fails is shown (npm keeps it to its debug log otherwise).
		return Prepare{Command: append(cmd, "--", "true"), Env: []string{"npm_config_offline=false", "npm_config_foreground_scripts=true"}}, nil
	case "uvx":
		if ln.refuse != "" || len(ln.specs) == 0 {
			return Prepare{}, errors.New("cannot prepare this uvx line: " + ln.refuse)
		}
		// The run's environment: its Python, every package in it.
		cmd := []string{l.Command[0]}
		if ln.python != "" {
			cmd = append(cmd, "--python", ln.python)
		}
		for _, w := range ln.with {
			cmd = append(cmd, "--with", w)
		}
		cmd = append(cmd, "--from", ln.specs[0], "python", "-c", "")
		return Prepare{Command: cmd, Env: []string{"UV_OFFLINE=0"}}, nil
	}
	return Prepare{}, ErrNothingToPrepare
}
