package supervisor

import (
	"fmt"
	"sync"

	"github.com/mcpsandbox/mcpsandbox/egress"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
	"github.com/mcpsandbox/mcpsandbox/supervisor/audit"
)

// egressOf makes the egress proxy of a policy in mode egress, or the
// offline resolver of a confined server in mode none (nil for host): one
// per relay, so names keep their addresses across restarts and denied
// hosts are remembered. Connections are logged by the proxy; onOpen and
// onClose (nil: none) are told of each (the relay's tie it to the calls in
// flight and write its audit line).
func egressOf(p policy.Policy, o Options, onOpen, onClose func(*egress.Conn)) (*egress.Proxy, error) {
	if p.Net == policy.NetNone && !p.Unconfined {
		return egress.NewOffline(o.Log.With("server", o.Name)), nil
	}
	if p.Net != policy.NetEgress {
		return nil, nil
	}
	rules, err := policy.ParseHostRules(p.AllowHosts, p.DenyHosts)
	if err != nil {
		return nil, err
	}
	resolver := ""
	if p.Resolver != "" {
		if resolver, err = policy.ResolverAddress(p.Resolver); err != nil {
			return nil, err
		}
	}
	eo := egress.Options{Rules: rules, Resolver: resolver, Log: o.Log.With("server", o.Name)}
	eo.OnOpen, eo.OnClose = onOpen, onClose
	proxy, err := egress.New(eo)
	if err != nil {
		return nil, fmt.Errorf("%w (network mode egress, --allow-host)", err)
	}
	return proxy, nil
}

// withEgress is spec with its captured connections served by proxy; stop
// (never nil) closes what the start handed over, once the process ended.
func withEgress(spec sandbox.Spec, proxy *egress.Proxy) (s sandbox.Spec, stop func()) {
	if proxy == nil {
		return spec, func() {}
	}
	var served func() // set by Start (which calls Egress or Resolver once) before it returns
	serve := func(l sandbox.Listeners) error {
		served = proxy.Serve(l.DNS, l.DNSTCP, l.TCP)
		return nil
	}
	if spec.Net == sandbox.NetNone {
		spec.Resolver = serve
	} else {
		spec.Egress = serve
	}
	return spec, func() {
		if served != nil {
			served()
		}
	}
}

// connections ties the server's connections to the tools/call requests in
// flight when each opened (their audit lines list it) and writes each
// connection's own audit line at its end.
type connections struct {
	r     *relay
	mu    sync.Mutex
	tools map[uint64][]string // open connection → tools in flight at its start
}

func (c *connections) open(conn *egress.Conn) {
	ref := audit.ConnectionRef{ID: conn.ID, Host: conn.Host(), Port: conn.Port, Allowed: conn.Allowed}
	var tools []string
	c.r.mu.Lock()
	for _, req := range c.r.inflight {
		if req.audit != nil && req.method == mToolsCall {
			req.audit.AddConnection(ref)
			tools = append(tools, req.audit.Tool())
		}
	}
	c.r.mu.Unlock()
	c.mu.Lock()
	c.tools[conn.ID] = tools
	c.mu.Unlock()
}

func (c *connections) close(conn *egress.Conn) {
	c.mu.Lock()
	tools := c.tools[conn.ID]
	delete(c.tools, conn.ID)
	c.mu.Unlock()
	a := audit.Connection{
		ID: conn.ID, Start: conn.Start, Host: conn.Host(), Port: conn.Port, Allowed: conn.Allowed,
		Reason: conn.Reason, Fix: conn.Fix, Duration: conn.Duration,
		BytesUp: conn.BytesUp, BytesDown: conn.BytesDown, Tools: tools,
	}
	if conn.Addr.IsValid() {
		a.Address = conn.Addr.String()
	}
	if conn.Err != nil && a.Reason == "" {
		a.Reason = conn.Err.Error()
	}
	c.r.audit.Connection(a)
}
