package supervisor

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
)

// Host → server. One goroutine reads the host; for each message it decides,
// under s.mu, whether it goes to the server now, waits in the restart queue,
// or is answered by mcpsandbox itself, then writes outside s.mu.

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
)

func methodKindOf(e *envelope) methodKind {
	m := e.method
	if e.methodEscaped {
		m = []byte(e.methodString())
	}
	switch string(m) {
	case "initialize":
		return mInitialize
	case "ping":
		return mPing
	case "logging/setLevel":
		return mSetLevel
	case "resources/subscribe":
		return mSubscribe
	case "resources/unsubscribe":
		return mUnsubscribe
	case "server/discover":
		return mDiscover
	}
	return mOther
}

func (s *server) readHost() {
	defer s.closeHost()
	lr := newLineReader(s.hostIn, int(s.pol.MaxMessage))
	var (
		f  frame
		b  batch
		sc scanner
	)
	for {
		if err := lr.next(&f); err != nil {
			if err == io.EOF {
				s.log.Info("host closed its end of the connection")
			} else {
				s.log.Warn("reading from the host failed", "error", err)
			}
			return
		}
		switch {
		case f.oversize:
			s.hostOversize(&f)
		case isBlank(f.line):
		default:
			if err := sc.scanLine(f.line, &b); err != nil {
				s.hostUnparsable(f.line, &b, err)
			} else if b.isArray {
				s.hostBatch(f.line, &b)
			} else {
				s.hostSingle(f.line, &b.msgs[0])
			}
		}
	}
}

// liveLocked reports whether host traffic can go straight to the server.
func (s *server) liveLocked() bool {
	return s.state == stateRunning && !s.gen.dead.Load()
}

func (s *server) hostSingle(line []byte, e *envelope) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	live := s.liveLocked()
	out, answer, key := s.hostElemLocked(line, e, live)
	// Answers to server→host requests go to the process that asked, even
	// while it is still being brought up (it may ask during replay).
	direct := live || e.kind == kindResponse
	if out != nil && !direct {
		if !s.enqueueLocked(out) {
			out = nil
			if e.kind == kindRequest {
				delete(s.inflight, key)
				answer = errorResponse(e.id(line), CodeQueueFull, s.queueFullMessage(), nil)
			} else {
				s.log.Warn("host notification dropped: the restart queue is full", "method", e.methodString())
			}
		} else {
			out = nil
		}
	}
	g := s.gen
	s.mu.Unlock()
	if answer != nil {
		s.host.write(answer)
	}
	if out != nil {
		g.write(withNewline(out))
	}
}

// hostElemLocked routes one host message: it registers requests, rewrites
// ids where needed, and returns what to send to the server (nil: nothing),
// what to answer the host at once (nil: nothing) and, for a registered
// request, its in-flight key. s.mu is held.
func (s *server) hostElemLocked(msg []byte, e *envelope, live bool) (out, answer []byte, key string) {
	switch e.kind {
	case kindRequest:
		return s.hostRequestLocked(msg, e, live)
	case kindNotification:
		return s.hostNotificationLocked(msg, e, live), nil, ""
	case kindResponse:
		return s.hostResponseLocked(msg, e), nil, ""
	}
	if id := e.id(msg); e.method != nil || (id != nil && !e.hasResult && !e.hasError) {
		s.log.Warn("host sent an invalid request; answered with an error", "problem", e.problem)
		return nil, errorResponse(id, codeInvalidRequest, "Invalid Request: "+e.problem, nil), ""
	}
	s.log.Warn("host sent an invalid message; dropped", "problem", e.problem, "line", truncate(msg, 200))
	return nil, nil, ""
}

func (s *server) hostRequestLocked(msg []byte, e *envelope, live bool) (out, answer []byte, key string) {
	raw := e.id(msg)
	mk := methodKindOf(e)
	if mk == mPing && !live {
		// mcpsandbox itself is alive: a host keepalive must not end the
		// session while the server restarts, or while it is down and
		// requests get errors saying why.
		return nil, resultResponse(raw, []byte("{}")), ""
	}
	if s.state == stateStopped || s.state == stateClosing {
		return nil, s.stoppedAnswerLocked(raw), ""
	}
	if mk == mInitialize && s.sess.init != nil {
		s.log.Warn("host sent initialize again; answered from the session cache (a server process never gets two)")
		return nil, resultResponse(raw, s.sess.init.result), ""
	}
	r := hostRequest{hostID: string(raw), method: mk}
	key = r.hostID
	if e.idEscaped {
		key = idKey(raw, true)
	}
	out = msg
	if isRelayID(raw) {
		// The host picked an id in mcpsandbox's namespace: the server sees
		// another one, so its answer cannot be mistaken for a relay's.
		s.seq++
		nid := quoteID(relayPrefix + "host:" + strconv.FormatUint(s.seq, 10))
		out = splice(msg, e.idStart, e.idEnd, nid)
		key, r.remapped = string(nid), true
	}
	if _, dup := s.inflight[key]; dup {
		s.log.Warn("host reused the id of a request still in flight", "id", r.hostID)
	}
	if live {
		r.gen = s.gen.n
	}
	if mk != mOther && mk != mPing {
		r.params = bytes.Clone(e.params)
	}
	s.inflight[key] = r
	return out, nil, key
}

func (s *server) hostNotificationLocked(msg []byte, e *envelope, live bool) []byte {
	if live && e.methodIs("notifications/initialized") {
		s.sess.hostInitialized = true // held ones count once flushed
	}
	if s.state == stateStopped || s.state == stateClosing {
		return nil
	}
	if e.methodIs("notifications/cancelled") {
		return s.hostCancelLocked(msg, e)
	}
	return msg
}

// hostCancelLocked handles the host cancelling one of its requests: the
// request is not answered at a crash any more, a remapped id is rewritten,
// and a cancellation of a request no longer in flight is dropped.
func (s *server) hostCancelLocked(msg []byte, e *envelope) []byte {
	reqID := memberValue(e.params, "requestId")
	if reqID == nil {
		return msg
	}
	key := idKey(reqID, bytes.IndexByte(reqID, '\\') >= 0)
	r, ok := s.inflight[key]
	if !ok && isRelayID(reqID) {
		for k, v := range s.inflight {
			if v.remapped && v.hostID == string(reqID) {
				key, r, ok = k, v, true
				break
			}
		}
	}
	if !ok {
		return nil
	}
	r.cancelled = true
	s.inflight[key] = r
	if r.remapped {
		start := offsetIn(msg, reqID)
		return splice(msg, start, start+len(reqID), []byte(key))
	}
	return msg
}

// hostResponseLocked maps the host's answer to a server→host request back to
// the id the server used, or drops it when that process is gone.
func (s *server) hostResponseLocked(msg []byte, e *envelope) []byte {
	raw := e.id(msg)
	key := idKey(raw, e.idEscaped)
	p, ok := s.pending[key]
	if !ok {
		s.log.Debug("host answered a request that is not pending; dropped", "id", string(raw))
		return nil
	}
	delete(s.pending, key)
	if s.pendingOrig[p.origKy] == key {
		delete(s.pendingOrig, p.origKy)
	}
	if s.gen == nil || p.gen != s.gen.n || s.gen.dead.Load() {
		s.log.Debug("host answered a request of a server process that is gone; dropped", "id", string(raw), "generation", p.gen)
		return nil
	}
	return splice(msg, e.idStart, e.idEnd, []byte(p.origID))
}

// enqueueLocked holds a host message until the restarted server is ready.
func (s *server) enqueueLocked(msg []byte) bool {
	if len(s.queue) >= maxQueued || s.queueBytes+len(msg) > int(s.pol.MaxMessage) {
		return false
	}
	c := make([]byte, 0, len(msg)+1)
	c = append(c, msg...)
	c = withNewline(c)
	s.queue = append(s.queue, c)
	s.queueBytes += len(c)
	return true
}

func (s *server) queueFullMessage() string {
	return fmt.Sprintf("MCP server is restarting and mcpsandbox already holds %d messages (%d bytes max, --max-message) for it; retry later", maxQueued, s.pol.MaxMessage)
}

// stoppedAnswerLocked is the answer to any request while the server is down
// for good or mcpsandbox is shutting down.
func (s *server) stoppedAnswerLocked(id []byte) []byte {
	if s.state == stateClosing {
		return errorResponse(id, CodeServerStopped, "mcpsandbox is shutting down", errorData{Reason: "shutting down"})
	}
	return errorResponse(id, CodeServerStopped, "MCP server is down: "+s.stopReason, errorData{Reason: s.stopReason})
}

// hostUnparsable answers a line that is not JSON at all.
func (s *server) hostUnparsable(line []byte, b *batch, err error) {
	s.log.Warn("host sent a line that is not JSON; answered with a parse error", "error", err, "line", truncate(line, 200))
	var id []byte
	if !b.isArray && len(b.msgs) == 1 && (b.msgs[0].idKind == idString || b.msgs[0].idKind == idNumber) {
		id = b.msgs[0].id(line)
	}
	s.host.write(errorResponse(id, codeParseError, "Parse error: "+err.Error(), nil))
}

// hostOversize answers a host message over --max-message with an error
// (to the host for a request, to the server for an answer it awaits).
func (s *server) hostOversize(f *frame) {
	s.log.Warn("host message over --max-message discarded", "bytes", f.size, "limit", s.pol.MaxMessage.String(), "head", truncate(f.head, 120))
	raw, escaped, isRequest, isResponse := recoverID(f)
	if raw == nil {
		return
	}
	data := errorData{Reason: "message too large", Limit: s.pol.MaxMessage.String()}
	if isRequest || !isResponse {
		s.host.write(errorResponse(raw, CodeMessageTooLarge, fmt.Sprintf("request of %d bytes is over mcpsandbox's --max-message %s; it was not relayed", f.size, s.pol.MaxMessage), data))
		return
	}
	s.mu.Lock()
	key := idKey(raw, escaped)
	p, ok := s.pending[key]
	delete(s.pending, key)
	g := s.gen
	s.mu.Unlock()
	if ok && g != nil && g.n == p.gen {
		msg := errorResponse([]byte(p.origID), CodeMessageTooLarge, fmt.Sprintf("the host's answer of %d bytes is over mcpsandbox's --max-message %s", f.size, s.pol.MaxMessage), data)
		s.writeMu.Lock()
		g.write(msg)
		s.writeMu.Unlock()
	}
}

// recoverID finds the top-level id of a discarded message in its head, or
// else in its tail, and what kind of message it was, as far as can be told.
func recoverID(f *frame) (raw []byte, escaped, isRequest, isResponse bool) {
	var sc scanner
	var b batch
	_ = sc.scanLine(f.head, &b)
	if !b.isArray && len(b.msgs) == 1 {
		e := &b.msgs[0]
		isRequest = e.method != nil
		isResponse = e.hasResult || e.hasError
		if e.idKind == idString || e.idKind == idNumber {
			return e.id(f.head), e.idEscaped, isRequest, isResponse
		}
	}
	if raw = tailID(f.tail); raw != nil {
		return raw, bytes.IndexByte(raw, '\\') >= 0, isRequest, isResponse
	}
	return nil, false, isRequest, isResponse
}

// hostBatch relays a JSON-RPC batch (protocol 2025-03-26), tracking every
// id in it. Answers mcpsandbox gives itself go out as separate messages.
func (s *server) hostBatch(line []byte, b *batch) {
	if len(b.spans) == 0 {
		s.host.write(errorResponse(nil, codeInvalidRequest, "Invalid Request: empty batch", nil))
		return
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	var (
		sc      scanner
		eb      batch
		parts   [][]byte
		answers [][]byte
		keys    []string
		changed bool
	)
	s.mu.Lock()
	live := s.liveLocked()
	for _, sp := range b.spans {
		elem := line[sp[0]:sp[1]]
		if sc.scanLine(elem, &eb) != nil {
			continue // cannot happen: the batch scanned as valid
		}
		out, answer, key := s.hostElemLocked(elem, &eb.msgs[0], live)
		if answer != nil {
			answers = append(answers, answer)
		}
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
	if msg != nil && !live {
		if !s.enqueueLocked(msg) {
			for _, k := range keys {
				if r, ok := s.inflight[k]; ok {
					delete(s.inflight, k)
					answers = append(answers, errorResponse([]byte(r.hostID), CodeQueueFull, s.queueFullMessage(), nil))
				}
			}
		}
		msg = nil
	}
	g := s.gen
	s.mu.Unlock()
	for _, a := range answers {
		s.host.write(a)
	}
	if msg != nil {
		g.write(withNewline(msg))
	}
}
