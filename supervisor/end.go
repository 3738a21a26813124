package supervisor

import (
	"bytes"
	"strconv"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
	"github.com/mcpsandbox/mcpsandbox/supervisor/audit"
	"github.com/mcpsandbox/mcpsandbox/supervisor/mcprules"
)

// outcome is how a host request ended. The words are the audit log's
// outcomes and, for the errors mcpsandbox answers itself, data.kind.
type outcome uint8

const (
	outAnswered        outcome = iota // a result: the server's (or mcpsandbox's, e.g. a ping while the server restarts)
	outToolError                      // a tools/call result with isError: true
	outError                          // a JSON-RPC error: the server's, or a standard one of mcpsandbox (invalid request, unknown prefixed tool)
	outDenied                         // CodePolicyDenied
	outTimeout                        // CodeCallTimeout
	outRateLimited                    // CodeRateLimited
	outTooManyCalls                   // CodeTooManyCalls
	outServerCrashed                  // CodeServerCrashed
	outServerStopped                  // CodeServerStopped
	outTooLarge                       // CodeMessageTooLarge
	outQueueFull                      // CodeQueueFull
	outInvalidResponse                // CodeInvalidResponse
	outStartTimeout                   // CodeStartTimeout
	outHeld                           // CodeHeld
	outCancelled                      // the host cancelled it: no answer
	outHostGone                       // the host left first: no answer
	outIDReused                       // the host sent another request under its id: no answer (the server's goes to the new one)
)

// auditOutcomes are the outcomes in the audit log's words.
var auditOutcomes = [...]audit.Outcome{
	outAnswered: audit.Answered, outToolError: audit.ToolError, outError: audit.Error,
	outDenied: audit.Denied, outTimeout: audit.Timeout, outRateLimited: audit.RateLimited, outTooManyCalls: audit.TooManyCalls,
	outServerCrashed: audit.ServerCrashed, outServerStopped: audit.ServerStopped, outTooLarge: audit.TooLarge,
	outQueueFull: audit.QueueFull, outInvalidResponse: audit.InvalidResponse, outStartTimeout: audit.StartTimeout,
	outHeld: audit.Held, outCancelled: audit.Cancelled, outHostGone: audit.HostGone, outIDReused: audit.IDReused,
}

func (o outcome) String() string { return string(auditOutcomes[o]) }

// code is the error code mcpsandbox answers a request that ended so with;
// 0 when the outcome is not one of its own errors.
func (o outcome) code() int {
	switch o {
	case outDenied:
		return CodePolicyDenied
	case outTimeout:
		return CodeCallTimeout
	case outRateLimited:
		return CodeRateLimited
	case outTooManyCalls:
		return CodeTooManyCalls
	case outServerCrashed:
		return CodeServerCrashed
	case outServerStopped:
		return CodeServerStopped
	case outTooLarge:
		return CodeMessageTooLarge
	case outQueueFull:
		return CodeQueueFull
	case outInvalidResponse:
		return CodeInvalidResponse
	case outStartTimeout:
		return CodeStartTimeout
	case outHeld:
		return CodeHeld
	}
	return 0
}

// unanswered reports whether a request that ended so gets no answer.
func (o outcome) unanswered() bool {
	return o == outCancelled || o == outHostGone || o == outIDReused
}

// ending is how one host request ended.
type ending struct {
	outcome outcome
	// answer is what the host gets: mcpsandbox's own answer, which
	// endLocked has written once r.mu is released, or the server's as
	// relayed, which the caller writes in its stream. Nil: nothing.
	answer  []byte
	code    int  // answer's error code; 0: a result
	relayed bool // answer is the server's message
}

// refusal is mcpsandbox's own error answer to the request with id, for an
// outcome of its own (o.code()) or outError with a standard code.
func refusal(o outcome, id []byte, code int, message string, data any) ending {
	if c := o.code(); c != 0 {
		code = c
	}
	return ending{outcome: o, answer: errorResponse(id, code, message, data), code: code}
}

// quietEnd is the end of a request the host gets no answer to.
func quietEnd(o outcome) ending { return ending{outcome: o} }

// serverEnd is the end of a request the server answered (e; out as
// relayed), toolErr when it is a tools/call result with isError.
func serverEnd(e *jsonrpc.Envelope, out []byte, toolErr bool) ending {
	end := ending{outcome: outAnswered, answer: out, relayed: true}
	switch {
	case e.HasError:
		end.outcome = outError
		end.code, _ = strconv.Atoi(string(jsonrpc.MemberValue(e.ErrorValue, "code")))
	case toolErr:
		end.outcome = outToolError
	}
	return end
}

// isToolError reports whether e's tools/call result is a tool error: its
// top-level isError is true. The scan noted the result's members, so a
// 16 MiB result is not read again.
func isToolError(e *jsonrpc.Envelope) bool {
	return string(e.ResultMember("isError")) == "true"
}

// endLocked ends host request req, registered under key ("" when it never
// was): the one place where a request's end is recorded, whatever ends it.
// The request leaves the table, gives back its concurrency slot, its timer
// is stopped, its audit line written and mcpsandbox's own answer queued for
// the host (written by unlock, outside r.mu). A request ends once: one the
// host cancelled stays in the table, ended, only so that the server's late
// answer is still relayed under the host's id. r.mu is held.
func (r *relay) endLocked(key string, req *hostRequest, end ending) {
	if key != "" {
		if cur, ok := r.inflight[key]; ok && cur.seq == req.seq {
			delete(r.inflight, key)
		}
	}
	if req.ended {
		return // only its place in the table was left
	}
	req.ended = true
	if req.timer != nil {
		req.timer.Stop()
	}
	if req.call != nil {
		req.call.End()
	}
	if req.audit != nil {
		if o := auditOutcomes[end.outcome]; end.code != 0 {
			req.audit.EndCode(o, end.code, msgLen(end.answer))
		} else {
			req.audit.End(o, msgLen(end.answer))
		}
	}
	if end.answer != nil && !end.relayed && !end.outcome.unanswered() {
		r.toHost = append(r.toHost, end.answer)
	}
	if r.drained != nil && r.awaitingLocked(r.drainGen) == 0 {
		close(r.drained)
		r.drained = nil
	}
}

// awaitingLocked counts the host requests written to process gen and still
// owed an answer. r.mu is held.
func (r *relay) awaitingLocked(gen int) int {
	n := 0
	for _, req := range r.inflight {
		if !req.ended && req.gen == gen {
			n++
		}
	}
	return n
}

// unlock releases r.mu, then writes to the host, in order, what was left
// for it under the lock: mcpsandbox's own answers, cancellations.
func (r *relay) unlock() {
	out := r.toHost
	r.toHost = nil
	r.mu.Unlock()
	for _, m := range out {
		r.host.write(m)
	}
}

// msgLen is a message's size without its line ending.
func msgLen(msg []byte) int { return len(bytes.TrimRight(msg, "\r\n")) }

// ruleEnd is the end of a request the MCP rules refused (gen: the process
// whose result they refused; 0 at arrival).
func (r *relay) ruleEnd(id []byte, method string, ref *mcprules.Refusal, gen int) ending {
	if gen == 0 {
		r.log.Info(method+" refused by the MCP rules", "why", ref.Message)
	}
	data := errorData{Reason: ref.Reason, Limit: ref.Limit, Generation: gen, RetryAfterMs: ref.RetryAfter.Milliseconds()}
	switch ref.Kind {
	case mcprules.RateLimited:
		return refusal(outRateLimited, id, 0, ref.Message, data)
	case mcprules.TooManyCalls:
		return refusal(outTooManyCalls, id, 0, ref.Message, data)
	case mcprules.UnknownTool:
		return refusal(outError, id, jsonrpc.CodeInvalidParams, ref.Message, nil)
	case mcprules.Unreadable:
		return refusal(outInvalidResponse, id, 0, ref.Message, data)
	case mcprules.Held:
		data.Item = ref.Item
		return refusal(outHeld, id, 0, ref.Message, data)
	case mcprules.SecretInArguments: // the code and kind; the relay's mapping adds data.path, data.secret and the audit's word
		return refusal(outError, id, CodeSecretInArguments, ref.Message, data)
	}
	return refusal(outDenied, id, 0, ref.Message, data)
}
