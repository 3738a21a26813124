package supervisor

import (
	"log/slog"

	"github.com/mcpsandbox/mcpsandbox/sandbox"
)

// Prepared guards a server that starts offline from packages a prepare
// fetched (an npx server under the npx policies): a start from a cache
// that a failed prepare left half-filled fails without a word, again and
// again, so it is refused before it begins, with the command that
// prepares the server; and a crash loop of starts names that command too.
type Prepared struct {
	// Check is asked before each start: an error (what is missing and the
	// command that fetches it) refuses the start, which the host's
	// requests are then answered with (CodeServerStopped).
	Check func() error
	// Command prepares the server again, e.g. `mcpsandbox prepare -- npx
	// -y pkg@1`.
	Command string
}

// guardStart is start refusing what p's Check refuses.
func (p *Prepared) guardStart(start func(sandbox.Spec, *slog.Logger) (sandbox.Process, error)) func(sandbox.Spec, *slog.Logger) (sandbox.Process, error) {
	if p == nil || p.Check == nil {
		return start
	}
	return func(s sandbox.Spec, log *slog.Logger) (sandbox.Process, error) {
		if err := p.Check(); err != nil {
			return nil, err
		}
		return start(s, log)
	}
}

// crashLoopHintLocked is what a crash loop's final error adds for a server that
// never got past its start: the packages it starts from may be what fails.
// r.mu is held.
func (r *relay) crashLoopHintLocked() string {
	p := r.prepared
	if p == nil || p.Check == nil || !r.startsFailed {
		return ""
	}
	if err := p.Check(); err != nil {
		return "; " + r.explain(err)
	}
	return "; it never got past its start, which installs its packages offline from its cache: if a prepare failed or was stopped, prepare it again with `" + p.Command + "`"
}
