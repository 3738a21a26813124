package supervisor

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
	"github.com/mcpsandbox/mcpsandbox/supervisor/mcprules"
)

// Server → host. One goroutine per server process reads its stdout. Only
// valid JSON-RPC reaches the host; everything else goes to the log.

// serverActs are follow-ups of routing one server message that must run
// outside r.mu.
type serverActs struct {
	startHeartbeat bool
	probeID        string
	probeAnswered  bool
	probeIsError   bool
	probeCode      int
	waiter         chan []byte
	waiterMsg      []byte
	refusal        []byte // an error answer to write to the server (or a decline's answer)
	refusedWhy     string
	declined       bool      // refusal answers as a user who said no (the policy's decline)
	quiet          bool      // the log has said it already (a flood over the limit)
	hint           *toolHint // a tools/call result to diagnose or neutralise, then end
}

func (r *relay) readServer(g *generation) {
	defer close(g.stdoutDone)
	lr := jsonrpc.NewLineReader(g.proc.Stdout(), int(r.pol.MaxMessage))
	lr.FindIDs = true
	lr.OnShrink = r.release
	var (
		f  jsonrpc.Frame
		b  jsonrpc.Batch
		sc = jsonrpc.Scanner{Strict: true} // what reaches the host must parse there
	)
	for lr.Next(&f) == nil {
		switch {
		case f.Oversize:
			r.serverOversize(g, &f)
		case jsonrpc.IsBlank(f.Line):
		default:
			if err := sc.Scan(f.Line, &b); err != nil {
				r.serverGarbage(g, f.Line, &b, jsonrpc.CodeParseError, err.Error())
			} else if b.IsArray {
				r.serverBatch(g, f.Line, &b)
			} else if e := &b.Msgs[0]; e.Kind == jsonrpc.Invalid {
				r.serverGarbage(g, f.Line, &b, jsonrpc.CodeInvalidRequest, e.Problem)
			} else {
				r.serverSingle(g, f.Line, e)
			}
		}
	}
}

func (r *relay) serverSingle(g *generation, line []byte, e *jsonrpc.Envelope) {
	var acts serverActs
	r.mu.Lock()
	out := r.serverElemLocked(g, line, e, &acts)
	r.unlock()
	r.serverFollowUp(g, &acts)
	if acts.hint != nil {
		out = r.endHinted(acts.hint)
	}
	if out != nil {
		r.host.write(jsonrpc.WithNewline(out))
	}
}

// serverElemLocked routes one server message and returns what to send to
// the host (nil: nothing). r.mu is held.
func (r *relay) serverElemLocked(g *generation, msg []byte, e *jsonrpc.Envelope, acts *serverActs) []byte {
	switch e.Kind {
	case jsonrpc.Response:
		raw := e.ID(msg)
		key := ""
		var req hostRequest
		var ok bool
		if e.IDEscaped {
			key = jsonrpc.IDKey(raw, true)
			req, ok = r.inflight[key]
		} else {
			req, ok = r.inflight[string(raw)] // no allocation on this path
		}
		if ok && req.gen == g.n {
			// Taken out of the table here, so that endLocked need not
			// make a key (the hot path allocates nothing).
			if e.IDEscaped {
				delete(r.inflight, key)
			} else {
				delete(r.inflight, string(raw))
			}
			if acts.startHeartbeat = !g.answered.Swap(true); acts.startHeartbeat {
				r.noteStartTook(time.Since(g.started))
			}
			out := msg
			if req.remapped {
				out = jsonrpc.Splice(msg, e.IDStart, e.IDEnd, []byte(req.hostID))
			}
			if e.HasError {
				out = r.markServersErrorLocked(msg, out, e, &req)
			}
			if req.ended {
				return out // the host cancelled it: the late answer goes as it is
			}
			if cachedMethods.has(req.method) && !e.HasError {
				r.sess.record(req, e, r.log)
			}
			result := e.Result // as the MCP rules leave it
			if e.HasResult && req.call != nil {
				res, ref := req.call.Result(e.Result)
				if ref != nil && ref.Kind != mcprules.Unreadable {
					r.log.Warn("server's result refused by the MCP rules; answered with an error", "method", methodNames[req.method], "why", ref.Message)
				} else if ref != nil {
					r.log.Warn("server's result cannot be checked against the MCP rules; answered with an error", "method", methodNames[req.method], "problem", ref.Reason)
				}
				if ref != nil {
					r.endLocked("", &req, r.ruleEnd([]byte(req.hostID), methodNames[req.method], ref, g.n))
					return nil
				}
				if res != nil {
					result = res
					out = bytes.TrimSuffix(jsonrpc.NewResult([]byte(req.hostID), res), []byte("\n"))
				}
			}
			toolErr := req.method == mToolsCall && e.HasResult && isToolError(e)
			var denied string
			if toolErr && !r.pol.NoToolHints {
				denied = r.deniedText(r.deniedSince(req.denials))
			}
			if req.method == mToolsCall && e.HasResult && (denied != "" || r.needsHint(result, toolErr)) {
				// The diagnosis and the rewriting parse the result: they
				// run, and the request ends, once r.mu is released.
				acts.hint = &toolHint{req: req, result: result, out: out, toolErr: toolErr, denied: denied}
				return out
			}
			if e.HasError {
				r.logDeniedBeforeError(req)
			}
			end := serverEnd(e, out, toolErr)
			r.endLocked("", &req, end)
			return out
		}
		if isRelayID(raw) {
			r.relayResponseLocked(g, msg, e, acts)
			return nil
		}
		if r.logLimit.allow(g.log) {
			g.log.Warn("server answered an id that is not in flight; dropped", "id", logValue(raw))
		}
		return nil

	case jsonrpc.Request:
		if g.retired.Load() {
			return nil
		}
		orig := e.ID(msg)
		if why := r.refuseLocked(orig); why != "" {
			acts.refusal, acts.refusedWhy = errorResponse(orig, CodeServerRequestRefused, "mcpsandbox refused the request: "+why, errorData{Reason: why, Generation: g.n}), why
			return nil
		}
		params, relayed := r.gateLocked(g, e, orig, acts)
		if !relayed {
			return nil
		}
		r.seq++
		nid := quoteID(relayPrefix + "g" + strconv.Itoa(g.n) + ":" + strconv.FormatUint(r.seq, 10))
		p := serverRequest{gen: g.n, origID: string(orig), origKey: jsonrpc.IDKey(orig, e.IDEscaped)}
		r.pending[string(nid)] = p
		r.pendingOrig[p.origKey] = string(nid)
		out, idStart, idEnd := msg, e.IDStart, e.IDEnd
		if params != nil { // marked as the server's words
			out, idStart, idEnd = withNewParams(msg, e, params)
		}
		return jsonrpc.Splice(out, idStart, idEnd, nid)

	case jsonrpc.Notification:
		if g.retired.Load() {
			return nil
		}
		if e.MethodIs("notifications/cancelled") {
			// The server gave up one of its own requests: name it by the
			// id the host knows.
			reqID := jsonrpc.MemberValue(e.Params, "requestId")
			if reqID == nil {
				return msg
			}
			nid, ok := r.pendingOrig[jsonrpc.IDKey(reqID, bytes.IndexByte(reqID, '\\') >= 0)]
			if !ok {
				return nil // already answered, or never asked
			}
			delete(r.pendingOrig, jsonrpc.IDKey(reqID, bytes.IndexByte(reqID, '\\') >= 0))
			delete(r.pending, nid)
			start := jsonrpc.OffsetIn(msg, reqID)
			return jsonrpc.Splice(msg, start, start+len(reqID), []byte(nid))
		}
		if r.resentAckLocked(e) {
			g.log.Debug("the restarted server acknowledged the host's subscriptions/listen stream again; the duplicate is not relayed")
			return nil
		}
		if r.rules != nil && !r.rules.ServerNotification(msg, e) {
			if r.logLimit.allow(g.log) {
				g.log.Debug("server notification dropped by the MCP rules", "method", logValue(e.Method), "params", logValue(e.Params))
			}
			return nil
		}
		return msg
	}
	return nil
}

// subscriptionID is where a notification names its subscriptions/listen
// stream: the stream's request id, in _meta.
const subscriptionID = "io.modelcontextprotocol/subscriptionId"

// resentAckLocked reports whether e is a restarted server's acknowledgement
// of a subscriptions/listen stream the relay re-sent it: the host has had
// one for that stream, and gets no second. r.mu is held.
func (r *relay) resentAckLocked(e *jsonrpc.Envelope) bool {
	if !e.MethodIs("notifications/subscriptions/acknowledged") {
		return false
	}
	id := jsonrpc.MemberValue(jsonrpc.MemberValue(e.Params, "_meta"), subscriptionID)
	if id == nil {
		return false
	}
	key := jsonrpc.IDKey(id, bytes.IndexByte(id, '\\') >= 0)
	req, ok := r.inflight[key]
	if !ok || !req.resent {
		return false
	}
	req.resent = false
	r.inflight[key] = req
	return true
}

// relayResponseLocked takes the server's answer to one of mcpsandbox's own
// requests: it never goes to the host.
func (r *relay) relayResponseLocked(g *generation, msg []byte, e *jsonrpc.Envelope, acts *serverActs) {
	raw := e.ID(msg)
	id := string(raw[1 : len(raw)-1])
	if strings.HasPrefix(id, relayPrefix+"ping:") {
		acts.probeAnswered, acts.probeID, acts.probeIsError = true, id, e.HasError
		if e.HasError {
			acts.probeCode, _ = strconv.Atoi(string(jsonrpc.MemberValue(e.ErrorValue, "code")))
		}
		return
	}
	if ch, ok := r.waiters[id]; ok {
		delete(r.waiters, id)
		acts.waiter, acts.waiterMsg = ch, bytes.Clone(msg)
		return
	}
	if e.HasError {
		g.log.Warn("server refused a request mcpsandbox replayed", "id", logValue([]byte(id)), "error", logValue(e.ErrorValue))
	}
}

func (r *relay) serverFollowUp(g *generation, acts *serverActs) {
	if acts.startHeartbeat {
		r.startHeartbeat(g)
	}
	if acts.probeAnswered {
		if c := g.probe(); c != nil {
			c.Answer(acts.probeID, acts.probeIsError, acts.probeCode)
		}
	}
	if acts.refusal != nil && acts.declined {
		if r.logLimit.allow(g.log) {
			g.log.Info("server request to the host declined by the policy; answered to the server as a user who said no")
		}
		g.write(acts.refusal)
	} else if acts.refusal != nil {
		if !acts.quiet && r.logLimit.allow(g.log) {
			g.log.Warn("server request to the host refused; answered to the server with an error", "reason", acts.refusedWhy, "code", CodeServerRequestRefused)
		}
		g.write(acts.refusal)
	}
	if acts.waiter != nil {
		select {
		case acts.waiter <- acts.waiterMsg:
		default:
		}
	}
}

// serverGarbage logs a line that is not JSON-RPC (code says how: a parse
// error or an invalid request). If it names a host request in flight (a
// malformed response), that request is answered with CodeInvalidResponse
// rather than left waiting; if it is a request with an id, the server gets
// the JSON-RPC error for it, as the spec asks, rather than no answer.
func (r *relay) serverGarbage(g *generation, line []byte, b *jsonrpc.Batch, code int, problem string) {
	if r.logLimit.allow(g.log) {
		g.log.Warn("server wrote a line to stdout that is not JSON-RPC; dropped (stdout is reserved for MCP messages, logs belong on stderr)",
			"problem", problem, "bytes", len(bytes.TrimRight(line, "\r\n")), "line", logValue(line))
	}
	if b.IsArray || len(b.Msgs) != 1 {
		return
	}
	e := &b.Msgs[0]
	raw, escaped := e.ID(line), e.IDEscaped
	if e.IDKind != jsonrpc.IDString && e.IDKind != jsonrpc.IDNumber {
		// The scan stopped before the id: it may still close the line, as
		// the TypeScript SDK writes it.
		raw, escaped = nil, false
		if t := bytes.TrimRight(line, "\r\n"); bytes.HasPrefix(bytes.TrimLeft(t, " \t"), []byte("{")) {
			raw = jsonrpc.TailID(t[len(t)-min(len(t), jsonrpc.OversizeTail):])
			escaped = bytes.IndexByte(raw, '\\') >= 0
		}
	}
	switch {
	case raw == nil:
	case e.Method == nil:
		r.failInflight(g, raw, escaped, outInvalidResponse,
			"MCP server sent an invalid response (not JSON-RPC: "+problem+"); see mcpsandbox's log", errorData{Reason: problem, Generation: g.n})
	case !g.retired.Load():
		r.answerInvalid(g, raw, code, problem)
	}
}

// answerInvalid answers, to the server, a request of its that is not valid
// JSON-RPC (or not JSON every host parses) with the standard error.
func (r *relay) answerInvalid(g *generation, id []byte, code int, problem string) {
	what := "Invalid Request: "
	if code == jsonrpc.CodeParseError {
		what = "Parse error: "
	}
	if r.logLimit.allow(g.log) {
		g.log.Warn("server sent an invalid request; answered to the server with an error", "problem", problem, "code", code, "id", logValue(id))
	}
	g.write(errorResponse(id, code, what+problem, nil))
}

// serverOversize handles a server message over --max-message: a response
// becomes an error for the host request; a request is answered to the
// server with an error, since the host could never have read it.
func (r *relay) serverOversize(g *generation, f *jsonrpc.Frame) {
	logged := r.logLimit.allow(g.log)
	if logged {
		g.log.Warn("server message over the message size limit discarded", "setting", r.setting("MaxMessage"), "bytes", f.Size, "limit", r.pol.MaxMessage.String(), "head", logValue(f.Head))
	}
	raw, escaped, isRequest, _ := f.RecoverID()
	if raw == nil {
		if logged {
			g.log.Warn("could not tell which request the oversized message answered; the request stays in flight until the server answers or dies")
		}
		return
	}
	data := errorData{Reason: "message too large", Generation: g.n, Limit: r.pol.MaxMessage.String()}
	if isRequest {
		msg := errorResponse(raw, CodeMessageTooLarge, fmt.Sprintf("request of %d bytes is over mcpsandbox's %s %s; the host never saw it", f.Size, r.setting("MaxMessage"), r.pol.MaxMessage), data)
		g.write(msg)
		return
	}
	r.failInflight(g, raw, escaped, outTooLarge,
		fmt.Sprintf("MCP server's response of %d bytes is over mcpsandbox's %s %s", f.Size, r.setting("MaxMessage"), r.pol.MaxMessage), data)
}

// failInflight answers a host request of generation g with an error of
// outcome o.
func (r *relay) failInflight(g *generation, raw []byte, escaped bool, o outcome, message string, data errorData) {
	key := jsonrpc.IDKey(raw, escaped)
	r.mu.Lock()
	if req, ok := r.inflight[key]; ok && req.gen == g.n {
		r.endLocked(key, &req, refusal(o, []byte(req.hostID), 0, message, data))
	}
	r.unlock()
}

// serverBatch relays a batch from the server element by element: answers
// to mcpsandbox's own requests and to unknown ids are taken out, ids of
// server→host requests are rewritten.
func (r *relay) serverBatch(g *generation, line []byte, b *jsonrpc.Batch) {
	var (
		sc      jsonrpc.Scanner
		eb      jsonrpc.Batch
		parts   [][]byte
		changed bool
		acts    []serverActs
		invalid []invalidRequest
	)
	r.mu.Lock()
	for _, sp := range b.Spans {
		elem := line[sp[0]:sp[1]]
		if sc.Scan(elem, &eb) != nil {
			continue
		}
		e := &eb.Msgs[0]
		if e.Kind == jsonrpc.Invalid {
			if r.logLimit.allow(g.log) {
				g.log.Warn("server batch element is not JSON-RPC; dropped", "problem", e.Problem, "element", logValue(elem))
			}
			if id := e.ID(elem); e.Method != nil && (e.IDKind == jsonrpc.IDString || e.IDKind == jsonrpc.IDNumber) {
				invalid = append(invalid, invalidRequest{id, e.Problem})
			}
			changed = true
			continue
		}
		var a serverActs
		out := r.serverElemLocked(g, elem, e, &a)
		if a.hint != nil {
			a.hint.part = len(parts)
		}
		acts = append(acts, a)
		if out == nil || len(out) != len(elem) || &out[0] != &elem[0] {
			changed = true
		}
		if out != nil {
			parts = append(parts, out)
		}
	}
	r.unlock()
	for _, in := range invalid {
		r.answerInvalid(g, in.id, jsonrpc.CodeInvalidRequest, in.problem)
	}
	for i := range acts {
		r.serverFollowUp(g, &acts[i])
		if h := acts[i].hint; h != nil {
			parts[h.part], changed = r.endHinted(h), true
		}
	}
	switch {
	case len(parts) == 0:
	case !changed:
		r.host.write(jsonrpc.WithNewline(line))
	default:
		r.host.write(append(append([]byte{'['}, bytes.Join(parts, []byte{','})...), ']', '\n'))
	}
}

type invalidRequest struct {
	id      []byte
	problem string
}

// refuseLocked says why a server→host request with id raw is not relayed
// ("" when it is): too many pending, or an id too long to keep.
func (r *relay) refuseLocked(raw []byte) string {
	switch {
	case len(raw) > maxServerIDLen:
		return fmt.Sprintf("its id is %d bytes long, over mcpsandbox's bound of %d", len(raw), maxServerIDLen)
	case len(r.pending) >= maxPending:
		return fmt.Sprintf("%d requests of the server to the host are already waiting for an answer, mcpsandbox's bound", maxPending)
	}
	return ""
}
