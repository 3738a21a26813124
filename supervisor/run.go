package supervisor

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor/audit"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// Options is one supervised server attached to one host connection.
type Options struct {
	Name   string        // label in logs (and later the daemon's server name); default: the command's base name
	Policy policy.Policy // validated by Run
	// StateDir is the host directory that is the server's private state
	// when Policy.State is on (package launch places it); "" otherwise.
	StateDir string
	HostIn   io.Reader    // messages from the host
	HostOut  io.Writer    // messages to the host
	Log      *slog.Logger // default: slog.Default()
	// Setting names a policy field (and field.Doctor) in messages to the
	// host and the log, the way the user set it: `run` as its --flag, a
	// policy file as its key. Default: the field's own name.
	Setting field.Namer
	// Events, when set, is called at each lifecycle change of the server
	// (from the supervisor's goroutines; keep it quick), for callers that
	// wait on them, as the tests do; logs carry the same facts.
	Events func(Event)
}

// EventKind names a lifecycle change.
type EventKind string

const (
	EventStarted EventKind = "started" // a server process started (Pid, Generation)
	EventExited  EventKind = "exited"  // it died or was killed as hung (Reason)
	EventReady   EventKind = "ready"   // a restarted process took over the session
	EventStopped EventKind = "stopped" // the server is down for good (Reason)
)

// Event is one lifecycle change of the supervised server.
type Event struct {
	Kind       EventKind
	Generation int // server process number, from 1
	Pid        int
	Reason     string
}

// Outcome says why supervision ended: ExitCode is what mcpsandbox exits with
// (0 after a clean end of the session, 1 when the server could not be kept
// up), Reason is the same fact in words (also the last log line).
type Outcome struct {
	Reason   string
	ExitCode int
	Restarts int // how often the server was restarted
}

// Run supervises until the host disconnects, ctx is cancelled (shutdown as on
// host EOF, but in-flight requests are answered), or the server ends the
// session by exiting cleanly when it is not to be restarted. It returns an
// error only when the policy is invalid, its audit log cannot be opened
// (both before anything starts) or the first server process cannot be
// started; in the last case only once the host has gone (or ctx is
// cancelled), having answered each of its requests with CodeServerStopped
// and the reason.
//
// When Run returns because of ctx or the server, a goroutine may still be
// blocked reading HostIn; it ends once HostIn is closed.
func Run(ctx context.Context, opts Options) (Outcome, error) {
	if opts.Setting == nil {
		opts.Setting = field.Plain
	}
	var err error
	if err = opts.Policy.Validate(); err != nil {
		return Outcome{Reason: field.Message(err, opts.Setting), ExitCode: 2}, err
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.Name == "" {
		opts.Name = filepath.Base(opts.Policy.Command[0])
	}
	r := newRelay(opts)
	p := opts.Policy
	r.audit, err = audit.Open(audit.Config{Path: p.AuditLog, MaxSize: int64(p.AuditMaxSize), Mask: p.AuditMask, Server: opts.Name, Log: r.log})
	if err != nil {
		return Outcome{Reason: field.Message(err, opts.Setting), ExitCode: 2}, err
	}
	defer r.audit.Close()
	return r.serve(ctx)
}
