package supervisor

// PLACEHOLDER owned by the relay work: replaced by the real supervisor.

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Options is one supervised server attached to one host connection.
type Options struct {
	Name    string        // label in logs (and later the daemon's server name)
	Policy  policy.Policy // validated
	HostIn  io.Reader     // messages from the host
	HostOut io.Writer     // messages to the host
	Log     *slog.Logger
}

// Outcome says why supervision ended: ExitCode is what mcpsandbox exits with.
type Outcome struct {
	Reason   string
	ExitCode int
}

// Run supervises until the host disconnects, ctx is cancelled (shutdown as on
// host EOF), or the server can no longer be kept up.
func Run(ctx context.Context, opts Options) (Outcome, error) {
	return Outcome{}, errors.New("supervisor: not built yet")
}
