package supervisor

import (
	"bytes"
	"fmt"
	"io"
	"strconv"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
	"github.com/mcpsandbox/mcpsandbox/supervisor/audit"
	"github.com/mcpsandbox/mcpsandbox/supervisor/mcprules"
)

// Host → server. One goroutine reads the host; for each message it decides,
// under r.mu, whether it goes to the server now, waits in the restart queue,
// or is answered by mcpsandbox itself, then writes outside r.mu.

// methodKind marks the methods the relay treats specially.
type methodKind uint8

const (
	mOther methodKind = iota
	mInitialize
	mPing
	mSetLevel
	mSubscribe
	mUnsubscribe
	mDiscover
	mToolsList
	mToolsCall
	mPromptsList
	mPromptsGet
	mResourcesList
	mTemplatesList
	mResourcesRead
	mComplete
	mListen
)

// methodSet is a set of methodKinds: which rules apply to a method is said
// by naming it, never by where its constant sits.
type methodSet uint32

func setOf(ms ...methodKind) methodSet {
	var s methodSet
	for _, m := range ms {
		s |= 1 << m
	}
	return s
}

func (s methodSet) has(m methodKind) bool { return s&(1<<m) != 0 }

var (
	// cachedMethods are those whose successful answer the session cache
	// records, to replay onto a restarted server.
	cachedMethods = setOf(mInitialize, mSetLevel, mSubscribe, mUnsubscribe, mDiscover)
	// auditedMethods are those --audit-log records (audit.Audited).
	auditedMethods = setOf(mToolsCall, mPromptsGet, mResourcesRead)
	// resentMethods are re-sent to a restarted server under their id, as
	// the spec asks of an open subscriptions/listen stream, instead of
	// being answered as crashed.
	resentMethods = setOf(mListen)
)

// methodNames are the methods of the kinds, as the host names them.
var methodNames = [...]string{
	mInitialize: "initialize", mPing: "ping", mSetLevel: "logging/setLevel", mSubscribe: "resources/subscribe",
	mUnsubscribe: "resources/unsubscribe", mDiscover: "server/discover", mToolsList: "tools/list", mToolsCall: "tools/call",
	mPromptsList: "prompts/list", mPromptsGet: "prompts/get", mResourcesList: "resources/list",
	mTemplatesList: "resources/templates/list", mResourcesRead: "resources/read", mComplete: "completion/complete",
	mListen: "subscriptions/listen",
}

// methodKinds finds a method's kind by its name.
var methodKinds = func() map[string]methodKind {
	m := make(map[string]methodKind, len(methodNames))
	for k, name := range methodNames {
		if name != "" {
			m[name] = methodKind(k)
		}
	}
	return m
}()

func methodKindOf(e *jsonrpc.Envelope) methodKind {
	m := e.Method
	if e.MethodEscaped {
		m = []byte(e.MethodString())
	}
	return methodKinds[string(m)] // mOther when absent
}

func (r *relay) readHost() {
	defer r.closeHost()
	lr := jsonrpc.NewLineReader(r.hostIn, int(r.pol.MaxMessage))
	lr.FindIDs = true
	lr.OnShrink = r.release
	var (
		f  jsonrpc.Frame
		b  jsonrpc.Batch
		sc jsonrpc.Scanner
	)
	for {
		if err := lr.Next(&f); err != nil {
			if err == io.EOF {
				r.log.Info("host closed its end of the connection")
			} else {
				r.log.Warn("reading from the host failed", "error", err)
			}
			return
		}
		switch {
		case f.Oversize:
			r.hostOversize(&f)
		case jsonrpc.IsBlank(f.Line):
		default:
			if err := sc.Scan(f.Line, &b); err != nil {
				r.hostUnparsable(f.Line, &b, err)
			} else if b.IsArray {
				r.hostBatch(f.Line, &b)
			} else {
				r.hostSingle(f.Line, &b.Msgs[0])
			}
		}
	}
}

// liveLocked reports whether host traffic can go straight to the server.
func (r *relay) liveLocked() bool {
	return r.state == stateRunning && !r.gen.dead.Load()
}

func (r *relay) hostSingle(line []byte, e *jsonrpc.Envelope) {
	r.mu.Lock()
	live := r.liveLocked()
	out, key := r.hostElemLocked(line, e, live)
	switch {
	case out == nil:
	case live || e.Kind == jsonrpc.Response:
		// Answers to server→host requests go to the process that asked,
		// even while it is still being brought up (it may ask during
		// replay).
		r.gen.write(ownLine(out))
	case !r.enqueueLocked(out):
		if req, ok := r.inflight[key]; ok && e.Kind == jsonrpc.Request {
			r.endLocked(key, &req, refusal(outQueueFull, []byte(req.hostID), 0, r.queueFullMessage(), nil))
		} else {
			r.log.Warn("host notification dropped: the restart queue is full", "method", e.MethodString())
		}
	}
	r.unlock()
}

// ownLine returns msg newline-terminated in memory of its own: msg may
// alias the reader's buffer, which the next line reuses.
func ownLine(msg []byte) []byte {
	n := len(msg)
	if n == 0 || msg[n-1] != '\n' {
		n++
	}
	c := make([]byte, n)
	copy(c, msg)
	c[n-1] = '\n'
	return c
}

// hostElemLocked routes one host message: it registers requests, rewrites
// ids where needed, and returns what to send to the server (nil: nothing)
// and, for a registered request, its in-flight key. What mcpsandbox
// answers itself is left for unlock. r.mu is held.
func (r *relay) hostElemLocked(msg []byte, e *jsonrpc.Envelope, live bool) (out []byte, key string) {
	switch e.Kind {
	case jsonrpc.Request:
		return r.hostRequestLocked(msg, e, live)
	case jsonrpc.Notification:
		return r.hostNotificationLocked(msg, e, live), ""
	case jsonrpc.Response:
		return r.hostResponseLocked(msg, e), ""
	}
	if id := e.ID(msg); e.Method != nil || (id != nil && !e.HasResult && !e.HasError) {
		r.log.Warn("host sent an invalid request; answered with an error", "problem", e.Problem)
		r.endLocked("", &hostRequest{hostID: string(id)}, refusal(outError, id, jsonrpc.CodeInvalidRequest, "Invalid Request: "+e.Problem, nil))
		return nil, ""
	}
	r.log.Warn("host sent an invalid message; dropped", "problem", e.Problem, "line", logValue(msg))
	return nil, ""
}

func (r *relay) hostRequestLocked(msg []byte, e *jsonrpc.Envelope, live bool) (out []byte, key string) {
	raw := e.ID(msg)
	mk := methodKindOf(e)
	req := hostRequest{hostID: string(raw), method: mk}
	if mk == mPing && !live {
		// mcpsandbox itself is alive: a host keepalive must not end the
		// session while the server restarts, or while it is down and
		// requests get errors saying why.
		r.endLocked("", &req, ending{outcome: outAnswered, answer: jsonrpc.NewResult(raw, []byte("{}"))})
		return nil, ""
	}
	out, idStart, idEnd := msg, e.IDStart, e.IDEnd
	if r.audit != nil && auditedMethods.has(mk) {
		req.audit = r.audit.Begin(methodNames[mk], e.Params, msgLen(msg))
	}
	var pending mcprules.Pending
	if r.rules != nil {
		v, call := r.rules.HostRequest(msg, e)
		if v.Refusal != nil {
			auditRefusal(req.audit, v.Refusal)
			r.endLocked("", &req, r.ruleEnd(raw, e.MethodString(), v.Refusal, 0))
			return nil, ""
		}
		req.call = call
		auditApproval(req.audit, v.Approval)
		if v.Answer != nil {
			// mcpsandbox answers in its own name (a question the host is
			// to ask its user): the server never sees the request.
			r.endLocked("", &req, ending{outcome: outAnswered, answer: jsonrpc.NewResult(raw, v.Answer)})
			return nil, ""
		}
		pending = v.Pending
		if v.Params != nil {
			out, idStart, idEnd = withNewParams(msg, e, v.Params)
		}
	}
	if r.state == stateStopped || r.state == stateClosing {
		r.endLocked("", &req, r.stoppedEndLocked(raw))
		return nil, ""
	}
	if mk == mInitialize && r.sess.init != nil {
		r.log.Warn("host sent initialize again; answered from the session cache (a server process never gets two)")
		answer := r.sess.init.result
		if req.call != nil { // what the host got the first time: the rules' (pins replace instructions)
			if res, ref := req.call.Result(answer); ref == nil && res != nil {
				answer = res
			}
		}
		r.endLocked("", &req, ending{outcome: outAnswered, answer: jsonrpc.NewResult(raw, answer)})
		return nil, ""
	}
	key = req.hostID
	if e.IDEscaped {
		key = jsonrpc.IDKey(raw, true)
	}
	if isRelayID(raw) {
		// The host picked an id in mcpsandbox's namespace: the server sees
		// another one, so its answer cannot be mistaken for a relay's.
		r.seq++
		nid := quoteID(relayPrefix + "host:" + strconv.FormatUint(r.seq, 10))
		out = jsonrpc.Splice(out, idStart, idEnd, nid)
		key, req.remapped = string(nid), true
	}
	if old, dup := r.inflight[key]; dup {
		if !old.ended {
			r.log.Warn("host reused the id of a request still in flight", "id", logValue([]byte(req.hostID)))
		}
		// The server's answer to the old one will be taken for the new one's.
		r.endLocked(key, &old, quietEnd(outIDReused))
	}
	r.seq++
	req.seq = r.seq
	req.denials = r.denialMark()
	if live {
		req.gen = r.gen.n
	}
	if cachedMethods.has(mk) || resentMethods.has(mk) {
		req.params = bytes.Clone(e.Params)
	}
	if pending != nil {
		r.holdLocked(key, &req, out, pending)
		return nil, ""
	}
	r.armTimersLocked(key, &req)
	r.inflight[key] = req
	return out, key
}

// armTimersLocked starts the clocks of request req as it goes to the
// server: --call-timeout (the rules'), --start-timeout. r.mu is held.
func (r *relay) armTimersLocked(key string, req *hostRequest) {
	if req.call != nil {
		if d := req.call.Timeout(); d > 0 {
			req.timer = r.armCallTimeout(key, req.seq, d)
		}
	}
	if (req.method == mInitialize || req.method == mDiscover) && r.pol.StartTimeout > 0 {
		req.timer = r.armStartTimeout(key, req.seq, r.pol.StartTimeout)
	}
}

func (r *relay) hostNotificationLocked(msg []byte, e *jsonrpc.Envelope, live bool) []byte {
	if live && e.MethodIs("notifications/initialized") {
		r.sess.hostInitialized = true // held ones count once flushed
	}
	if r.state == stateStopped || r.state == stateClosing {
		return nil
	}
	if e.MethodIs("notifications/cancelled") {
		return r.hostCancelLocked(msg, e)
	}
	return msg
}

// hostCancelLocked handles the host cancelling one of its requests: the
// request is not answered at a crash any more, a remapped id is rewritten,
// and a cancellation of a request no longer in flight is dropped.
func (r *relay) hostCancelLocked(msg []byte, e *jsonrpc.Envelope) []byte {
	reqID := jsonrpc.MemberValue(e.Params, "requestId")
	if reqID == nil {
		return msg
	}
	key := jsonrpc.IDKey(reqID, bytes.IndexByte(reqID, '\\') >= 0)
	req, ok := r.inflight[key]
	if !ok && isRelayID(reqID) {
		for k, v := range r.inflight {
			if v.remapped && v.hostID == string(reqID) {
				key, req, ok = k, v, true
				break
			}
		}
	}
	if !ok {
		return nil
	}
	if req.wait != nil {
		// Held, never relayed: it ends here (its Decide's ctx too), and
		// the server, which never saw it, gets no cancellation.
		r.endLocked(key, &req, quietEnd(outCancelled))
		return nil
	}
	if !req.ended {
		// The host expects no answer now: the request ends here (its
		// concurrency slot is free, though the server may still answer).
		r.endLocked(key, &req, quietEnd(outCancelled))
		r.inflight[key] = req
	}
	if req.remapped {
		start := jsonrpc.OffsetIn(msg, reqID)
		return jsonrpc.Splice(msg, start, start+len(reqID), []byte(key))
	}
	return msg
}

// hostResponseLocked maps the host's answer to a server→host request back to
// the id the server used, or drops it when that process is gone.
func (r *relay) hostResponseLocked(msg []byte, e *jsonrpc.Envelope) []byte {
	raw := e.ID(msg)
	key := jsonrpc.IDKey(raw, e.IDEscaped)
	if r.askAnsweredLocked(key, msg, e) {
		return nil // mcpsandbox's own question: never the server's
	}
	p, ok := r.pending[key]
	if !ok {
		r.log.Debug("host answered a request that is not pending; dropped", "id", logValue(raw))
		return nil
	}
	delete(r.pending, key)
	if r.pendingOrig[p.origKey] == key {
		delete(r.pendingOrig, p.origKey)
	}
	if r.gen == nil || p.gen != r.gen.n || r.gen.dead.Load() {
		r.log.Debug("host answered a request of a server process that is gone; dropped", "id", logValue(raw), "generation", p.gen)
		return nil
	}
	return jsonrpc.Splice(msg, e.IDStart, e.IDEnd, []byte(p.origID))
}

// enqueueLocked holds a host message until the restarted server is ready.
func (r *relay) enqueueLocked(msg []byte) bool {
	if len(r.queue) >= maxQueued || r.queueBytes+len(msg) > int(r.pol.MaxMessage) {
		return false
	}
	c := make([]byte, 0, len(msg)+1)
	c = append(c, msg...)
	c = jsonrpc.WithNewline(c)
	r.queue = append(r.queue, c)
	r.queueBytes += len(c)
	return true
}

func (r *relay) queueFullMessage() string {
	return fmt.Sprintf("MCP server is restarting and mcpsandbox already holds %d messages (%d bytes max, --max-message) for it; retry later", maxQueued, r.pol.MaxMessage)
}

// stoppedEndLocked is the end of any request while the server is down for
// good or mcpsandbox is shutting down.
func (r *relay) stoppedEndLocked(id []byte) ending {
	if r.state == stateClosing {
		return refusal(outServerStopped, id, 0, "mcpsandbox is shutting down", errorData{Reason: "shutting down"})
	}
	msg, data := r.withDenied("MCP server is down: "+r.stopReason+r.stopDetailLocked(), errorData{Reason: r.stopReason}, 0)
	return refusal(outServerStopped, id, 0, msg, data)
}

// hostUnparsable answers a line that is not JSON at all.
func (r *relay) hostUnparsable(line []byte, b *jsonrpc.Batch, err error) {
	r.log.Warn("host sent a line that is not JSON; answered with a parse error", "error", err, "line", logValue(line))
	var id []byte
	if !b.IsArray && len(b.Msgs) == 1 && (b.Msgs[0].IDKind == jsonrpc.IDString || b.Msgs[0].IDKind == jsonrpc.IDNumber) {
		id = b.Msgs[0].ID(line)
	}
	r.mu.Lock()
	r.endLocked("", &hostRequest{hostID: string(id)}, refusal(outError, id, jsonrpc.CodeParseError, "Parse error: "+err.Error(), nil))
	r.unlock()
}

// hostOversize answers a host message over --max-message with an error
// (to the host for a request, to the server for an answer it awaits).
func (r *relay) hostOversize(f *jsonrpc.Frame) {
	r.log.Warn("host message over the message size limit discarded", "setting", r.setting("MaxMessage"), "bytes", f.Size, "limit", r.pol.MaxMessage.String(), "head", logValue(f.Head))
	raw, escaped, isRequest, isResponse := f.RecoverID()
	data := errorData{Reason: "message too large", Limit: r.pol.MaxMessage.String()}
	if isRequest || !isResponse {
		// Its id unknown, it cannot be answered; its audit line still says
		// it came.
		req := hostRequest{hostID: string(raw), audit: r.beginOversized(f)}
		end := ending{outcome: outTooLarge}
		if raw != nil {
			end = refusal(outTooLarge, raw, 0, fmt.Sprintf("request of %d bytes is over mcpsandbox's %s %s; it was not relayed", f.Size, r.setting("MaxMessage"), r.pol.MaxMessage), data)
		}
		r.mu.Lock()
		r.endLocked("", &req, end)
		r.unlock()
		return
	}
	r.mu.Lock()
	key := jsonrpc.IDKey(raw, escaped)
	p, ok := r.pending[key]
	delete(r.pending, key)
	g := r.gen
	r.mu.Unlock()
	if ok && g != nil && g.n == p.gen {
		g.write(errorResponse([]byte(p.origID), CodeMessageTooLarge, fmt.Sprintf("the host's answer of %d bytes is over mcpsandbox's %s %s", f.Size, r.setting("MaxMessage"), r.pol.MaxMessage), data))
	}
}

// beginOversized starts the audit record of a request over --max-message,
// never read whole: its method comes from its head.
func (r *relay) beginOversized(f *jsonrpc.Frame) *audit.Call {
	if r.audit == nil {
		return nil
	}
	var sc jsonrpc.Scanner
	var b jsonrpc.Batch
	_ = sc.Scan(f.Head, &b)
	if b.IsArray || len(b.Msgs) != 1 || b.Msgs[0].Method == nil {
		return nil
	}
	return r.audit.BeginOversized(b.Msgs[0].MethodString(), int(f.Size))
}

// hostBatch relays a JSON-RPC batch (protocol 2025-03-26), tracking every
// id in it. Answers mcpsandbox gives itself go out as separate messages.
func (r *relay) hostBatch(line []byte, b *jsonrpc.Batch) {
	if len(b.Spans) == 0 {
		r.mu.Lock()
		r.endLocked("", &hostRequest{}, refusal(outError, nil, jsonrpc.CodeInvalidRequest, "Invalid Request: empty batch", nil))
		r.unlock()
		return
	}
	var (
		sc      jsonrpc.Scanner
		eb      jsonrpc.Batch
		parts   [][]byte
		keys    []string
		changed bool
	)
	r.mu.Lock()
	live := r.liveLocked()
	for _, sp := range b.Spans {
		elem := line[sp[0]:sp[1]]
		if sc.Scan(elem, &eb) != nil {
			continue // cannot happen: the batch scanned as valid
		}
		out, key := r.hostElemLocked(elem, &eb.Msgs[0], live)
		if key != "" {
			keys = append(keys, key)
		}
		if out == nil || len(out) != len(elem) || &out[0] != &elem[0] {
			changed = true
		}
		if out != nil {
			parts = append(parts, out)
		}
	}
	var msg []byte
	switch {
	case len(parts) == 0:
	case !changed:
		msg = line
	default:
		msg = append(append([]byte{'['}, bytes.Join(parts, []byte{','})...), ']', '\n')
	}
	switch {
	case msg == nil:
	case live:
		r.gen.write(ownLine(msg))
	case !r.enqueueLocked(msg):
		for _, k := range keys {
			if req, ok := r.inflight[k]; ok {
				r.endLocked(k, &req, refusal(outQueueFull, []byte(req.hostID), 0, r.queueFullMessage(), nil))
			}
		}
	}
	r.unlock()
}
