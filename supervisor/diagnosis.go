package supervisor

import (
	"bytes"
	"os"
	"path/filepath"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor/diagnose"
)

// What the server prints when its confinement keeps it from working is read
// by package diagnose, outside r.mu: the stderr of a start that failed (it
// walks the host's file system), and a tool error that quotes an errno
// (decided from the policy alone).

// factsOf is what the diagnosis is told of the server's confinement; its
// state directory, when it has one, is a writable grant.
func factsOf(p policy.Policy, stateDir string, lookupEnv func(string) (string, bool)) diagnose.Facts {
	rw := p.ReadWrite
	if stateDir != "" {
		rw = append(rw[:len(rw):len(rw)], stateDir)
	}
	return diagnose.Facts{
		Command: p.Command, WorkDir: p.WorkDir, ReadOnly: p.ReadOnly, ReadWrite: rw, Tmpfs: p.Tmpfs,
		Net: p.Net, NetHost: policy.NetHost, NetEgress: policy.NetEgress, User: p.User, Root: os.Geteuid() == 0, Env: p.Env,
		HostEnv: func(name string) bool { _, ok := lookupEnv(name); return ok },
		Own:     ownPlaces(stateDir, lookupEnv),
	}
}

// ownPlaces are mcpsandbox's own places on this host, which a diagnosis
// never names as a grant: every server's state directory (beside this
// one's), the user's state, configuration and sockets of mcpsandbox.
func ownPlaces(stateDir string, lookupEnv func(string) (string, bool)) []string {
	var own []string
	if stateDir != "" {
		own = append(own, filepath.Dir(stateDir))
	}
	env := func(name string) string { v, _ := lookupEnv(name); return v }
	if v := env("MCPSANDBOX_STATE_DIR"); v != "" {
		own = append(own, v)
	}
	home := env("HOME")
	for _, base := range []struct{ xdg, fallback string }{
		{"XDG_STATE_HOME", ".local/state"}, {"XDG_CONFIG_HOME", ".config"}, {"XDG_RUNTIME_DIR", ""},
	} {
		if v := env(base.xdg); filepath.IsAbs(v) {
			own = append(own, filepath.Join(v, "mcpsandbox"))
		}
		if base.fallback != "" && filepath.IsAbs(home) {
			own = append(own, filepath.Join(home, base.fallback, "mcpsandbox"))
		}
	}
	return own
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

// toolHint is a tools/call result that needs more than relaying: a tool
// error worth diagnosing, or a result holding text that could pass for
// mcpsandbox's own. It was taken out of the table under r.mu, and is ended
// (as it reaches the host) once the work, done outside r.mu, is done.
type toolHint struct {
	req     hostRequest
	result  []byte // the raw result, aliasing the line read
	out     []byte // the answer as relayed so far
	part    int    // its index among a batch's parts
	toolErr bool   // the result is a tool error
	denied  string // the hosts denied during the call, as deniedText says them
}

// needsHint reports whether a tools/call result (raw, its isError
// toolErr) goes through hintToolError: cheap, it reads only the bytes.
func (r *relay) needsHint(result []byte, toolErr bool) bool {
	return toolErr && !r.pol.NoToolHints && diagnose.Explainable(result) || diagnose.MayPassForHint(result)
}

// endHinted ends a request whose tools/call result needed more than
// relaying (outside r.mu) and returns its answer as the host gets it.
func (r *relay) endHinted(h *toolHint) []byte {
	out := r.hintToolError(h)
	end := ending{outcome: outAnswered, answer: out, relayed: true}
	if h.toolErr {
		end.outcome = outToolError
	}
	r.mu.Lock()
	r.endLocked("", &h.req, end)
	r.unlock()
	return out
}

// hintToolError returns out with the server's items that could pass for
// mcpsandbox's neutralised and, for a tool error the policy explains
// (unless NoToolHints), mcpsandbox's item added saying what of the
// confinement caused it and which setting fixes it; out itself when
// there is nothing to change.
func (r *relay) hintToolError(h *toolHint) []byte {
	res, changed := diagnose.Neutralize(h.result)
	if !changed {
		res = h.result
	} else if r.logLimit.allow(r.log) {
		r.log.Warn("a tool result held text that would pass for mcpsandbox's own; the host gets it marked as the server's")
	}
	if h.toolErr && !r.pol.NoToolHints {
		if d, ok := diagnose.ToolError(h.result, r.facts); ok {
			why := d.Render(r.setting, policy.KeyOf)
			if hinted, ok := diagnose.AddHint(res, why); ok {
				res, changed = hinted, true
				if r.logLimit.allow(r.log) {
					r.log.Warn("a tool call failed because of the confinement; the host's tool error says how to fix it", "cause", why)
				}
			}
		}
	}
	if h.denied != "" {
		if hinted, ok := diagnose.AddHint(res, "during this call "+h.denied); ok {
			res, changed = hinted, true
		}
	}
	if !changed {
		return h.out
	}
	return bytes.TrimSuffix(jsonrpc.NewResult([]byte(h.req.hostID), res), []byte("\n"))
}
