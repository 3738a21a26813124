package supervisor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sort"
	"strconv"
	"time"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
)

// The session cache holds what a restarted server must be told to continue
// the host's session: the host's initialize (replayed unchanged), the
// negotiated protocol version and capabilities (checked against the new
// process), the log level and the active resource subscriptions.
// Stateless 2026-07-28 sessions have none of it: each request carries its
// own _meta, so there is nothing to replay.
type session struct {
	init            *initState
	hostInitialized bool              // the host's notifications/initialized reached a process
	logLevel        []byte            // params of the last successful logging/setLevel
	subs            map[string][]byte // uri → params of an active resources/subscribe
	discoverParams  []byte            // stateless sessions: the host's server/discover params
}

type initState struct {
	params          []byte // the host's initialize params, raw
	result          []byte // the server's first initialize result, raw
	protocolVersion string
	capabilities    map[string]any
}

// record updates the cache from a successful response to a host request.
func (ss *session) record(r hostRequest, e *jsonrpc.Envelope, log *slog.Logger) {
	switch r.method {
	case mInitialize:
		var res struct {
			ProtocolVersion string         `json:"protocolVersion"`
			Capabilities    map[string]any `json:"capabilities"`
		}
		if err := json.Unmarshal(e.Result, &res); err != nil {
			log.Warn("server's initialize result is malformed; the session cannot be replayed after a restart", "error", err)
			return
		}
		ss.init = &initState{
			params:          r.params,
			result:          bytes.Clone(e.Result),
			protocolVersion: res.ProtocolVersion,
			capabilities:    res.Capabilities,
		}
		log.Info("session initialized", "protocol_version", res.ProtocolVersion)
	case mSetLevel:
		ss.logLevel = r.params
	case mSubscribe:
		if uri := uriOf(r.params); uri != "" {
			ss.subs[uri] = r.params
		}
	case mUnsubscribe:
		delete(ss.subs, uriOf(r.params))
	case mDiscover:
		if r.params == nil {
			r.params = []byte("{}")
		}
		ss.discoverParams = r.params
	}
}

func uriOf(params []byte) string {
	var p struct {
		URI string `json:"uri"`
	}
	json.Unmarshal(params, &p)
	return p.URI
}

// listChanged returns the lists the server declared listChanged for.
func (in *initState) listChanged() []string {
	var lists []string
	for _, name := range []string{"tools", "prompts", "resources"} {
		if c, ok := in.capabilities[name].(map[string]any); ok && c["listChanged"] == true {
			lists = append(lists, name)
		}
	}
	return lists
}

var errHostGone = errors.New("the host closed the connection")

// askingFor is the host's initialize params asking for the protocol
// version the session negotiated, where the host asked for another (a
// later one the first server did not speak): a new server that speaks the
// later one too, as a new version of the package may, then answers with
// the session's version instead of one the host never agreed to.
func askingFor(params []byte, version string) []byte {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil || p == nil {
		return params
	}
	if asked, _ := jsonrpc.StringValue(p["protocolVersion"]); asked == version {
		return params
	}
	v, err := json.Marshal(version)
	if err != nil {
		return params
	}
	p["protocolVersion"] = v
	if b, err := json.Marshal(p); err == nil {
		return b
	}
	return params
}

// replay brings a new server process into the host's session: the cached
// initialize under a relay id (its result is checked and swallowed),
// notifications/initialized, the log level and the subscriptions. It
// returns the new process's initialize state, or nil for stateless
// sessions.
func (r *relay) replay(ctx context.Context, g *generation) (*initState, error) {
	r.mu.Lock()
	init := r.sess.init
	hostInitialized := r.sess.hostInitialized
	level := r.sess.logLevel
	var subs [][]byte
	uris := make([]string, 0, len(r.sess.subs))
	for u := range r.sess.subs {
		uris = append(uris, u)
	}
	sort.Strings(uris)
	for _, u := range uris {
		subs = append(subs, r.sess.subs[u])
	}
	r.mu.Unlock()
	if init == nil {
		return nil, nil
	}

	id := relayPrefix + "init:" + strconv.Itoa(g.n)
	answer, forget := r.await(id)
	defer forget()
	err := g.write(jsonrpc.NewRequest(quoteID(id), "initialize", askingFor(init.params, init.protocolVersion)))
	if err != nil {
		return nil, fmt.Errorf("could not send the replayed initialize: %w", err)
	}
	wait := r.replayWait()
	t := time.NewTimer(wait)
	defer t.Stop()
	var msg []byte
	select {
	case msg = <-answer:
	case <-g.proc.Done():
		return nil, errDead
	case <-t.C:
		return nil, fmt.Errorf("the restarted server did not answer initialize within %s", wait)
	case <-r.hostGone:
		return nil, errHostGone
	case <-ctx.Done():
		return nil, ctx.Err()
	}

	var resp struct {
		Result *struct {
			ProtocolVersion string         `json:"protocolVersion"`
			Capabilities    map[string]any `json:"capabilities"`
		} `json:"result"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg, &resp); err != nil || (resp.Result == nil && resp.Error == nil) {
		return nil, fmt.Errorf("the restarted server answered the replayed initialize with %s", logValue(msg))
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("the restarted server refused the replayed initialize: %d %s", resp.Error.Code, resp.Error.Message)
	}
	if resp.Result.ProtocolVersion != init.protocolVersion {
		return nil, fmt.Errorf("the restarted server negotiated protocol version %q, but the session uses %q (did the server change?)",
			resp.Result.ProtocolVersion, init.protocolVersion)
	}
	now := &initState{params: init.params, result: init.result, protocolVersion: init.protocolVersion, capabilities: resp.Result.Capabilities}
	if !reflect.DeepEqual(resp.Result.Capabilities, init.capabilities) {
		g.log.Warn("the restarted server declares other capabilities than at the start of the session; the host keeps the first ones",
			"before", init.capabilities, "after", resp.Result.Capabilities)
	}
	g.answered.Store(true)
	r.noteStartTook(time.Since(g.started))
	r.startHeartbeat(g)

	if hostInitialized {
		g.write(jsonrpc.NewNotification("notifications/initialized", nil))
	}
	var state []replayed
	if level != nil {
		state = append(state, replayed{"logging/setLevel", level})
	}
	for _, p := range subs {
		state = append(state, replayed{"resources/subscribe", p})
	}
	if err := r.replayState(ctx, g, state, t.C); err != nil {
		return nil, err
	}
	return now, nil
}

// await registers a waiter for the answer to mcpsandbox's own request id;
// forget takes it off again.
func (r *relay) await(id string) (answer <-chan []byte, forget func()) {
	ch := make(chan []byte, 1)
	r.mu.Lock()
	r.waiters[id] = ch
	r.mu.Unlock()
	return ch, func() {
		r.mu.Lock()
		delete(r.waiters, id)
		r.mu.Unlock()
	}
}

// replayed is one request of the session's state sent to a new process.
type replayed struct {
	method string
	params []byte
}

// replayState sends the log level and subscriptions and waits for their
// answers before the host's traffic flows again: servers (the Go SDK's)
// handle requests concurrently, so a host request flushed right behind
// them could otherwise run before the level is set. A refusal is logged;
// the session goes on without that piece.
func (r *relay) replayState(ctx context.Context, g *generation, reqs []replayed, deadline <-chan time.Time) error {
	if len(reqs) == 0 {
		return nil
	}
	answers := make([]<-chan []byte, len(reqs))
	ids := make([]string, len(reqs))
	for i := range reqs {
		r.mu.Lock()
		r.seq++
		ids[i] = relayPrefix + "replay:" + strconv.FormatUint(r.seq, 10)
		r.mu.Unlock()
		var forget func()
		answers[i], forget = r.await(ids[i])
		defer forget()
	}
	for i, q := range reqs {
		if err := g.write(jsonrpc.NewRequest(quoteID(ids[i]), q.method, q.params)); err != nil {
			return errDead
		}
	}
	for i, q := range reqs {
		select {
		case msg := <-answers[i]:
			var resp struct {
				Error json.RawMessage `json:"error"`
			}
			if json.Unmarshal(msg, &resp) == nil && resp.Error != nil {
				g.log.Warn("server refused a request mcpsandbox replayed", "method", q.method, "error", logValue(resp.Error))
			}
		case <-g.proc.Done():
			return errDead
		case <-deadline:
			return fmt.Errorf("the restarted server did not answer the replayed %s within %s", q.method, r.replayWait())
		case <-r.hostGone:
			return errHostGone
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// flush hands the messages held during the restart to g in order and lets
// host traffic through again.
func (r *relay) flush(g *generation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	q := r.queue
	r.queue, r.queueBytes = nil, 0
	for k, req := range r.inflight {
		if req.gen == 0 && req.wait == nil { // a held one is not in the queue
			req.gen = g.n
			r.inflight[k] = req
		}
	}
	// A held notifications/initialized is replayed to later processes
	// once this one got it (the replay above did not send it).
	var sc jsonrpc.Scanner
	var b jsonrpc.Batch
	for _, m := range q {
		if sc.Scan(m, &b) == nil && !b.IsArray && b.Msgs[0].MethodIs("notifications/initialized") {
			r.sess.hostInitialized = true
		}
		if g.write(m) != nil {
			break // it died again (or hung); its requests are answered as crashed
		}
	}
	// Host messages from now on follow the held ones: both are handed to
	// g's writer under r.mu.
	r.state = stateRunning
}
