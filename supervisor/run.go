package supervisor

import (
	"io"
	"log/slog"
	"path/filepath"

	"github.com/mcpsandbox/mcpsandbox/launch"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
	"github.com/mcpsandbox/mcpsandbox/supervisor/mcprules"

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
	Log      *slog.Logger // nil: nothing is logged
	// Setting names a policy field (and field.Doctor) in messages to the
	// host and the log, the way the user set it: `run` as its --flag, a
	// policy file as its key. Default: the field's own name.
	Setting field.Namer
	// Events, when set, is called at each lifecycle change of the server
	// (from the supervisor's goroutines; keep it quick), for callers that
	// wait on them, as the tests do; logs carry the same facts.
	Events func(Event)
	// LookupEnv reads mcpsandbox's own environment: a bare NAME in the
	// policy's Env passes its value on to the server (os.LookupEnv in the
	// CLI). Nil: an empty environment, so bare NAMEs pass nothing.
	LookupEnv func(name string) (string, bool)
	// Start starts one server process; nil: sandbox.Start. A daemon or a
	// test may put something in front of it.
	Start func(sandbox.Spec, *slog.Logger) (sandbox.Process, error)
	// ReleaseMemory, when set, is called after a relay dropped a buffer
	// grown for a big message, for the process to hand the memory back to
	// the OS; it is the process's, shared by all its relays
	// (MemoryReleaser). Nil: the Go runtime's scavenger does it, in time.
	ReleaseMemory func()
	// AuditTap, when set, is given each audit line of the session (a
	// tools/call, prompts/get, resources/read, connection), with or
	// without the policy's --audit-log: the daemon shows them in
	// `mcpsandbox logs`. Quick, and not keeping the slice.
	AuditTap func(line []byte)
	// Environ is mcpsandbox's own environment (os.Environ() in the CLI):
	// what an --unconfined server inherits. Nil: nothing but its policy's
	// Env. Confined servers never see it.
	Environ []string
	// FormerState is where an earlier mcpsandbox kept this server's state
	// under a name other servers shared (resolve's FormerState): moved to
	// StateDir before the first start when it is this server's, else
	// left, the log saying which and why (statemove.go).
	FormerState launch.Former
	// Prepared, when set, guards a server that starts offline from what a
	// prepare fetched: its starts are refused while that is incomplete.
	Prepared *Prepared
	// ID is the server's identity, its entry's key in the lock (launch's
	// state name, e.g. npm+@playwright+mcp); "": no pins are enforced (a
	// prepare, a server of the tests').
	ID string
	// Lock is the lock file when the policy names none (Policy.Lock): a
	// daemon's beside its config; "": the user's (lock.DefaultPath).
	Lock string
	// Neighbours are the other servers whose tools the same host sees (a
	// daemon config's), by their ids in the lock → their --tool-prefix: the
	// scanner finds tool-name clashes and shadowing among them. Nil: none.
	Neighbours map[string]string
	// rules, when set, are chained inside the policy's and the pins'
	// rules: the tests' own (export_test.go).
	rules mcprules.Rules
}

// spec is what the sandbox starts for o's server.
func (o Options) spec() sandbox.Spec {
	s := SpecOf(o.Name, o.Policy, o.StateDir, o.LookupEnv)
	if s.Unconfined {
		s.Inherit = o.Environ
	}
	return s
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

// Outcome says why supervision ended: Reason in words (also the last log
// line), and whether the server could not be kept up (Failed: it stopped
// for good, after a crash loop, a failure under --restart never, or a
// start that failed) rather than the session ending cleanly.
type Outcome struct {
	Reason   string
	Failed   bool
	Restarts int // how often the server was restarted
}

// baseName is a server's default name: its command's base name.
func baseName(command string) string { return filepath.Base(command) }

// withDefaults fills in what the caller left out.
func (o Options) withDefaults() Options {
	if o.Setting == nil {
		o.Setting = field.Plain
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.LookupEnv == nil {
		o.LookupEnv = func(string) (string, bool) { return "", false }
	}
	if o.Start == nil {
		o.Start = sandbox.Start
	}
	if o.ReleaseMemory == nil {
		o.ReleaseMemory = func() {}
	}
	return o
}
