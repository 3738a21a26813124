package resolve

import (
	"strings"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
)

// Spec is what the sandbox is asked to start for r: its policy in the
// sandbox's terms, each variable passed by name read from the host's
// environment (and left out where it has none). It is what the
// supervisor starts (supervisor/spec.go builds the same from the policy),
// for sandbox.Describe to say what that will be.
func (r Resolution) Spec() sandbox.Spec {
	p := r.Policy
	var env []string
	for _, e := range p.Env {
		if strings.Contains(e, "=") {
			env = append(env, e)
		} else if r.host.LookupEnv != nil {
			if v, ok := r.host.LookupEnv(e); ok {
				env = append(env, e+"="+v)
			}
		}
	}
	net := sandbox.NetNone
	if p.Net == policy.NetHost {
		net = sandbox.NetHost
	}
	return sandbox.Spec{
		Name:       r.Launch.Name,
		Args:       p.Command,
		Env:        env,
		Dir:        p.WorkDir,
		Tmpfs:      p.Tmpfs,
		StateDir:   r.StateDir(),
		Unconfined: p.Unconfined,
		ReadOnly:   p.ReadOnly,
		ReadWrite:  p.ReadWrite,
		TmpSize:    int64(p.TmpSize),
		Net:        net,
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
