package supervisor

import (
	"context"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpsandbox/mcpsandbox/egress"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
)

// Once is how a RunOnce ended: the command's exit, and under egress the
// hosts the policy kept it from.
type Once struct {
	sandbox.Exit
	// Refused are the --allow-host values that would have let the command
	// reach what it asked for and was refused, first asked first, at most
	// a few; RefusedMore: it asked for more than those.
	Refused     []string
	RefusedMore bool
	// Reached are the hosts (HOST:PORT) it connected to and was allowed,
	// first reached first, at most egress.MaxDeniedHosts of them.
	Reached []string
}

// RunOnce runs the policy's command once to its end, confined as Run would
// start it, with no host: its standard input closed, its standard output
// and error copied to out. `mcpsandbox prepare` fills a server's package
// cache with it. Cancelling ctx kills the command.
func RunOnce(ctx context.Context, opts Options, out io.Writer) (Once, error) {
	if err := opts.Policy.Validate(); err != nil {
		return Once{}, err
	}
	opts = opts.withDefaults()
	opts.moveFormerState()
	var reached reachedHosts
	proxy, err := egressOf(opts.Policy, opts, reached.note, nil)
	if err != nil {
		return Once{Exit: sandbox.Exit{SetupErr: err}}, err
	}
	if proxy != nil {
		defer proxy.Close()
	}
	spec, stopEgress := withEgress(opts.spec(), proxy)
	defer stopEgress()
	proc, err := opts.Start(spec, opts.Log)
	if err != nil {
		return Once{Exit: sandbox.Exit{SetupErr: err}}, err
	}
	defer proc.Close()
	proc.Stdin().Close()
	w := &lockedWriter{w: out} // stdout and stderr are copied at once
	var copied sync.WaitGroup
	for _, r := range []io.Reader{proc.Stdout(), proc.Stderr()} {
		copied.Add(1)
		go func() {
			defer copied.Done()
			_, _ = io.Copy(w, r)
		}()
	}
	select {
	case <-proc.Done():
	case <-ctx.Done():
		_ = proc.Kill()
		<-proc.Done()
	}
	copied.Wait()
	stopEgress() // its connections' ends are noted before they are read
	once := Once{Exit: proc.Exit()}
	if proxy != nil {
		once.Refused, once.RefusedMore = allowable(proxy.Denied(0))
		once.Reached = reached.list()
	}
	return once, ctx.Err()
}

// allowable are the --allow-host values that allow what d holds, first
// denied first; more: d holds hosts past those it names (a --deny-host
// refusal is not one: no --allow-host lets it through).
func allowable(d egress.Denied) (hosts []string, more bool) {
	for _, h := range d.Hosts {
		if spec, ok := strings.CutPrefix(h.Fix, "--allow-host "); ok && !slices.Contains(hosts, spec) {
			hosts = append(hosts, spec)
		}
	}
	return hosts, d.Others > 0
}

// reachedHosts are the distinct hosts of allowed connections, bounded: a
// command that connects to millions of hosts gets only the first few kept.
type reachedHosts struct {
	mu    sync.Mutex
	hosts []string
}

func (r *reachedHosts) note(c *egress.Conn) {
	if !c.Allowed {
		return
	}
	h := net.JoinHostPort(c.Host(), strconv.Itoa(int(c.Port)))
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.hosts) < egress.MaxDeniedHosts && !slices.Contains(r.hosts, h) {
		r.hosts = append(r.hosts, h)
	}
}

func (r *reachedHosts) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.hosts)
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
