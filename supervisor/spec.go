package supervisor

import (
	"errors"
	"net/netip"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/egress"
	"github.com/mcpsandbox/mcpsandbox/launch"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
)

// SpecOf is the one translation of a policy into what the sandbox starts
// for one server process: the relay starts it, and policy explain hands it
// to sandbox.Describe, so the two cannot disagree. Environment entries
// given as a bare NAME take their value from mcpsandbox's own environment,
// read by lookupEnv (nil: none), and are left out when it has none.
func SpecOf(name string, p policy.Policy, stateDir string, lookupEnv func(string) (string, bool)) sandbox.Spec {
	var env []string
	for _, e := range p.Env {
		if strings.Contains(e, "=") {
			env = append(env, e)
		} else if lookupEnv == nil {
			continue
		} else if v, ok := lookupEnv(e); ok {
			env = append(env, e+"="+v)
		}
	}
	net := sandbox.NetNone
	var capture sandbox.CaptureSpec
	switch p.Net {
	case policy.NetHost:
		net = sandbox.NetHost
	case policy.NetEgress:
		net = sandbox.NetEgress
		if rules, err := policy.ParseHostRules(p.AllowHosts, p.DenyHosts); err == nil { // Validate has checked them
			capture.Ports, capture.Local = egress.CaptureOf(rules, netip.Prefix{})
		}
	}
	var resolver func(sandbox.Listeners) error
	if net == sandbox.NetNone && !p.Unconfined {
		// The relay serves it (withEgress): the offline resolver, which
		// names the hosts the server tries. Described here too.
		resolver = unservedResolver
	}
	return sandbox.Spec{
		Resolver:   resolver,
		Name:       name,
		Args:       p.Command,
		Script:     launch.Script(p.Command),
		Env:        env,
		Dir:        p.WorkDir,
		Tmpfs:      p.Tmpfs,
		StateDir:   stateDir,
		Unconfined: p.Unconfined,
		ReadOnly:   p.ReadOnly,
		ReadWrite:  p.ReadWrite,
		TmpSize:    int64(p.TmpSize),
		Net:        net,
		Capture:    capture,
		User:       p.User,
		NoFile:     p.NoFile,
		FileSize:   int64(p.FileSize),
		NoExecTmp:  p.NoExecTmp,
		Seccomp:    p.Seccomp,
		SeccompLog: p.SeccompLog,
		Memory:     int64(p.Memory),
		Pids:       p.Pids,
		CPU:        p.CPU,
	}
}

// unservedResolver is SpecOf's Resolver until the relay gives the one it
// serves: a start without it fails, naming why.
func unservedResolver(sandbox.Listeners) error {
	return errors.New("no resolver serves the server's DNS (supervisor's withEgress was not applied)")
}
