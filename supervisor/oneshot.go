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
	var reached reachedHosts
	a, err := startAlone(opts, reached.note)
	if err != nil {
		return Once{Exit: sandbox.Exit{SetupErr: err}}, err
	}
	defer a.Close()
	a.Stdin().Close()
	w := &lockedWriter{w: out} // stdout and stderr are copied at once
	var copied sync.WaitGroup
	for _, r := range []io.Reader{a.Stdout(), a.Stderr()} {
		copied.Add(1)
		go func() {
			defer copied.Done()
			_, _ = io.Copy(w, r)
		}()
	}
	select {
	case <-a.Done():
	case <-ctx.Done():
		_ = a.Kill()
		<-a.Done()
	}
	copied.Wait()
	a.stopEgress() // its connections' ends are noted before they are read
	once := Once{Exit: a.Exit()}
	if a.proxy != nil {
		once.Refused, once.RefusedMore = allowable(a.proxy.Denied(0))
		once.Reached = reached.list()
	}
	return once, ctx.Err()
}

// Alone is one process of the policy's command, started confined as Run
// would start it but with no relay: its caller holds its standard streams.
type Alone struct {
	sandbox.Process
	proxy      *egress.Proxy
	stopEgress func()
}

// StartAlone starts the policy's command once, confined as Run would start
// it (its network served as Run serves it: under net none the offline
// resolver), with no relay, no restarts and no host. RunOnce is one
// caller; the upgrade probe, which speaks to the process itself, another.
// Close it once done: it kills what still runs and stops its network.
func StartAlone(opts Options) (*Alone, error) { return startAlone(opts, nil) }

// startAlone is StartAlone telling onOpen (nil: nobody) of each connection
// the egress proxy opens.
func startAlone(opts Options, onOpen func(*egress.Conn)) (*Alone, error) {
	if err := opts.Policy.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	opts.moveFormerState()
	proxy, err := egressOf(opts.Policy, opts, onOpen, nil)
	if err != nil {
		return nil, err
	}
	spec, stop := withEgress(opts.spec(), proxy)
	proc, err := opts.Start(spec, opts.Log)
	if err != nil {
		stop()
		if proxy != nil {
			proxy.Close()
		}
		return nil, err
	}
	return &Alone{Process: proc, proxy: proxy, stopEgress: sync.OnceFunc(stop)}, nil
}

// Close kills the process if it still runs, waits for it, and stops its
// network.
func (a *Alone) Close() error {
	_ = a.Kill()
	<-a.Done()
	a.stopEgress()
	err := a.Process.Close()
	if a.proxy != nil {
		a.proxy.Close()
	}
	return err
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
