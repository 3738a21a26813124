package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// Timeout bounds a probe from the start to the last page: a candidate that
// installs offline from its prepared cache and lists is done in seconds.
const Timeout = 30 * time.Second

// Run starts the server opts describe confined, in a probe sandbox, and
// lists everything it tells the model (Converse). Whatever opts say, the
// probe sandbox has no network (net none: not even the package index),
// passes none of mcpsandbox's own environment (a bare NAME in the
// policy's env passes nothing, so no token reaches the candidate; values
// the policy sets itself, such as npx's offline switch, stay) and refuses
// an unconfined policy; opts.StateDir should be a fresh directory apart
// from the running server's (the caller's to make: the candidate's
// packages are prepared into it). The probe ends after timeout (0:
// Timeout), killing the server.
func Run(ctx context.Context, opts supervisor.Options, timeout time.Duration) (Listing, error) {
	if opts.Policy.Unconfined {
		return Listing{}, errors.New("the probe runs a server confined only: its policy is unconfined")
	}
	if timeout <= 0 {
		timeout = Timeout
	}
	opts.Policy.Net, opts.Policy.AllowHosts, opts.Policy.DenyHosts = policy.NetNone, nil, nil
	opts.LookupEnv, opts.Environ = nil, nil
	opts.Prepared = nil
	proc, err := supervisor.StartAlone(opts)
	if err != nil {
		return Listing{}, fmt.Errorf("starting it: %w", err)
	}
	defer proc.Close()
	var stderr tail
	go func() { _, _ = io.Copy(&stderr, proc.Stderr()) }()
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("the probe's timeout of %s passed", timeout))
	defer cancel()
	l, err := Converse(ctx, proc.Stdin(), proc.Stdout())
	if err != nil {
		if last := stderr.last(); last != "" {
			err = fmt.Errorf("%w; its last words on stderr: %s", err, last)
		}
		return Listing{}, err
	}
	return l, nil
}

// tail keeps the last bytes the server wrote to stderr, for an error.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailBytes = 2048

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailBytes {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailBytes:]...)
	}
	return len(p), nil
}

// last is the last non-blank line written.
func (t *tail) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
