package supervisor

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
)

// The MCP rules give a tools/call its --call-timeout (mcprules.Call); the
// relay keeps the clock, since only it can answer the host and cancel the
// call at the server.

// armCallTimeout starts the --call-timeout clock of host request seq.
func (r *relay) armCallTimeout(key string, seq uint64, d time.Duration) *time.Timer {
	return time.AfterFunc(d, func() { r.callTimedOut(key, seq) })
}

// callTimedOut answers a tools/call still in flight after --call-timeout and
// cancels it at the server under the id the server knows; the server's late
// answer then finds nothing in flight and is dropped. A call still held for
// a restarting server gets its cancellation queued behind it.
func (r *relay) callTimedOut(key string, seq uint64) {
	req, ok := r.lockStillInFlight(key, seq)
	if !ok {
		return // answered, or failed with the process, in the meantime
	}
	limit := req.call.Timeout().String()
	msg, data := r.withDenied(fmt.Sprintf("tools/call did not complete within mcpsandbox's %s %s; it was cancelled", r.setting("CallTimeout"), limit),
		errorData{Reason: "call timeout", Generation: req.gen, Limit: limit}, req.denials)
	r.endLocked(key, &req, refusal(outTimeout, []byte(req.hostID), 0, msg, data))
	serverID := req.hostID
	if req.remapped {
		serverID = key
	}
	cancel := jsonrpc.NewNotification("notifications/cancelled", map[string]any{
		"requestId": json.RawMessage(serverID),
		"reason":    "mcpsandbox: the call took longer than " + r.setting("CallTimeout") + " " + limit,
	})
	switch g := r.gen; {
	case req.gen == 0:
		r.enqueueLocked(cancel)
	case g != nil && g.n == req.gen:
		g.write(cancel)
	}
	r.unlock()
	r.log.Warn("tools/call timed out; answered the host with an error and cancelled it at the server", "setting", r.setting("CallTimeout"), "limit", limit, "generation", req.gen)
}

// armStartTimeout starts the --start-timeout clock of host request seq, an
// initialize or server/discover.
func (r *relay) armStartTimeout(key string, seq uint64, d time.Duration) *time.Timer {
	return time.AfterFunc(d, func() { r.startTimedOut(key, seq) })
}

// startTimedOut answers an initialize (or server/discover) still in flight
// after --start-timeout, naming the hosts the server was denied: a server
// that needs the network at start often waits for it without a word. The
// request leaves the table, so the server's late answer is dropped; the
// server itself is left to the heartbeat and crash handling as before
// (MCP forbids cancelling initialize).
func (r *relay) startTimedOut(key string, seq uint64) {
	req, ok := r.lockStillInFlight(key, seq)
	if !ok {
		return
	}
	limit := r.pol.StartTimeout.String()
	method := methodNames[req.method]
	msg, data := r.withDenied(fmt.Sprintf("MCP server did not answer %s within mcpsandbox's %s %s", method, r.setting("StartTimeout"), limit),
		errorData{Reason: "start timeout", Generation: req.gen, Limit: limit}, 0)
	r.endLocked(key, &req, refusal(outStartTimeout, []byte(req.hostID), 0, msg, data))
	r.unlock()
	r.log.Warn("the server did not answer the host's "+method+" in time; answered the host with an error", "setting", r.setting("StartTimeout"), "limit", limit, "denied_hosts", data.DeniedHosts)
}

// lockStillInFlight takes r.mu and returns host request seq if it is still
// in flight under key, r.mu held; else it releases r.mu and returns false.
func (r *relay) lockStillInFlight(key string, seq uint64) (hostRequest, bool) {
	r.mu.Lock()
	req, ok := r.inflight[key]
	if !ok || req.seq != seq || req.ended {
		r.mu.Unlock()
		return hostRequest{}, false
	}
	return req, true
}
