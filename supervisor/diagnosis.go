package supervisor

import (
	"bytes"
	"os"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor/diagnose"
)

// What the server prints when its confinement keeps it from working is read
// by package diagnose, outside r.mu (it walks the host's file system): the
// stderr of a start that failed, and a tool error that quotes an errno.

// factsOf is what the diagnosis is told of the server's confinement.
func factsOf(p policy.Policy, lookupEnv func(string) (string, bool)) diagnose.Facts {
	return diagnose.Facts{
		Command: p.Command, WorkDir: p.WorkDir, ReadOnly: p.ReadOnly, ReadWrite: p.ReadWrite,
		Net: p.Net, NetHost: policy.NetHost, NetEgress: policy.NetEgress, User: p.User, Root: os.Geteuid() == 0, Env: p.Env,
		HostEnv: func(name string) bool { _, ok := lookupEnv(name); return ok },
	}
}

// startCause says, naming the setting that fixes it, what of the
// confinement kept the server from starting; "" when nothing did, as far as
// the host tells.
func (r *relay) startCause(stderr []string) string {
	d, ok := diagnose.StartFailure(stderr, r.facts)
	if !ok {
		return ""
	}
	return d.Render(r.setting, policy.KeyOf)
}

// toolHint is a tools/call answered with a tool error worth diagnosing: it
// was taken out of the table under r.mu, and is ended (with the hint, if
// any) once the diagnosis, run outside r.mu, is done.
type toolHint struct {
	req    hostRequest
	result []byte // the raw result, aliasing the line read
	out    []byte // the answer as relayed so far
	part   int    // its index among a batch's parts
}

// endHinted ends a request answered with a tool error (outside r.mu) and
// returns its answer as the host gets it.
func (r *relay) endHinted(h *toolHint) []byte {
	out := r.hintToolError(h)
	r.mu.Lock()
	r.endLocked("", &h.req, ending{outcome: outToolError, answer: out, relayed: true})
	r.unlock()
	return out
}

// hintToolError returns out with a text item added to the result that
// says what of the confinement caused the tool error, and which setting
// fixes it; out itself when the diagnosis finds nothing.
func (r *relay) hintToolError(h *toolHint) []byte {
	d, ok := diagnose.ToolError(h.result, r.facts)
	if !ok {
		return h.out
	}
	why := d.Render(r.setting, policy.KeyOf)
	res, ok := diagnose.AddText(h.result, "mcpsandbox: "+why)
	if !ok {
		return h.out
	}
	if r.logLimit.allow(r.log) {
		r.log.Warn("a tool call failed because of the confinement; the host's tool error says how to fix it", "cause", why)
	}
	return bytes.TrimSuffix(jsonrpc.NewResult([]byte(h.req.hostID), res), []byte("\n"))
}
