package supervisor

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// The audit log (--audit-log): one JSON line per tools/call, prompts/get
// and resources/read of the host, written when the call ends, whatever the
// end: the server's answer, one of mcpsandbox's errors (denied, timeout,
// crash, stop, too large, queue full), the host's cancellation, the host
// leaving. The relay formats each line (bounded, secrets masked) and hands
// it to one writer goroutine through a bounded queue, so a slow disk never
// holds the relay: when the queue is full the line is dropped, counted, and
// the count written as a line of its own once the writer catches up.

// auditQueue bounds the lines waiting for the writer; with lines of at most
// a few KiB (arguments are cut at auditArgsMax) it bounds their memory.
const auditQueue = 1024

// auditor writes the audit log of one relay (one host session).
type auditor struct {
	server  string
	session string // random, made once per relay: tells sessions apart in one file
	mask    *masker
	log     *slog.Logger
	file    *auditFile

	mu      sync.Mutex
	closed  bool
	dropped int // lines lost to a full queue, not yet reported
	lines   chan []byte
	done    chan struct{}
}

// openAudit opens the policy's audit log, or returns nil when it has none.
// An error names AuditLog.
func openAudit(opts Options, log *slog.Logger) (*auditor, error) {
	p := opts.Policy
	if p.AuditLog == "" {
		return nil, nil
	}
	f, narrowed, err := openAuditFile(p.AuditLog, int64(p.AuditMaxSize))
	if err != nil {
		return nil, &field.Error{Field: "AuditLog", Value: p.AuditLog, Problem: "cannot be opened", Err: err,
			Fix: "choose a file in a directory mcpsandbox can write, or leave {AuditLog} out"}
	}
	var id [8]byte
	rand.Read(id[:])
	a := &auditor{
		server: opts.Name, session: hex.EncodeToString(id[:]), mask: newMasker(p.AuditMask), log: log, file: f,
		lines: make(chan []byte, auditQueue), done: make(chan struct{}),
	}
	if narrowed {
		log.Warn("the audit log was readable by others; its mode is now 0600 (what it held before may have been read)", "file", p.AuditLog)
	}
	log.Info("audit log opened", "file", p.AuditLog, "session", a.session)
	go a.write()
	return a, nil
}

// write is the writer goroutine.
func (a *auditor) write() {
	defer close(a.done)
	failing := false
	for line := range a.lines {
		err := a.file.write(line)
		a.mu.Lock()
		n := a.dropped
		a.dropped = 0
		a.mu.Unlock()
		if n > 0 && err == nil {
			err = a.file.write(a.droppedLine(n))
		}
		switch {
		case err != nil && !failing:
			a.log.Warn("writing the audit log failed; later lines are tried again", "error", err)
		case err == nil && failing:
			a.log.Info("writing the audit log works again")
		}
		failing = err != nil
		if n > 0 {
			a.log.Warn("audit lines dropped: the audit log did not keep up", "dropped", n)
		}
	}
}

// close writes what is queued (waiting at most drainTimeout: a hung file
// system must not hold mcpsandbox's exit) and closes the file. Calls ending
// later are not logged.
func (a *auditor) close() {
	if a == nil {
		return
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return
	}
	a.closed = true
	close(a.lines)
	a.mu.Unlock()
	t := time.NewTimer(drainTimeout)
	defer t.Stop()
	select {
	case <-a.done:
	case <-t.C:
		a.log.Warn("the audit log did not take its last lines in time; they are lost")
		return
	}
	if n := a.dropped; n > 0 {
		a.file.write(a.droppedLine(n))
		a.log.Warn("audit lines dropped: the audit log did not keep up", "dropped", n)
	}
	a.file.close()
}

func (a *auditor) send(line []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return
	}
	select {
	case a.lines <- line:
	default:
		a.dropped++
	}
}

func (a *auditor) droppedLine(n int) []byte {
	line, _ := json.Marshal(struct {
		Time    string `json:"time"`
		Server  string `json:"server"`
		Session string `json:"session"`
		Dropped int    `json:"dropped"`
	}{auditTime(time.Now()), a.server, a.session, n})
	return append(line, '\n')
}

func auditTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// auditCall is one audited host request, from its arrival to its end.
type auditCall struct {
	a       *auditor
	start   time.Time
	method  string
	tool    string
	prompt  string
	uri     string
	args    json.RawMessage
	argsLen int // the arguments' size as sent, when cut
	note    string
	bytesIn int
	ended   atomic.Bool // a request ends once, whichever path sees it first
}

// auditRecord is one line of the audit log.
type auditRecord struct {
	Time       string          `json:"time"` // when the request arrived
	Server     string          `json:"server"`
	Session    string          `json:"session"`
	Method     string          `json:"method"`
	Tool       string          `json:"tool,omitempty"`
	Prompt     string          `json:"prompt,omitempty"`
	URI        string          `json:"uri,omitempty"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	ArgsBytes  int             `json:"arguments_bytes,omitempty"` // set when the arguments were cut
	Note       string          `json:"note,omitempty"`
	Outcome    string          `json:"outcome"`
	Code       *int            `json:"code,omitempty"`
	DurationMS float64         `json:"duration_ms"`
	BytesIn    int             `json:"bytes_in"`
	BytesOut   int             `json:"bytes_out"`
}

// Outcomes of an audited call.
const (
	auditOK        = "ok"         // the server answered with a result
	auditError     = "error"      // a JSON-RPC error, from the server or (e.g. an unknown prefixed tool) mcpsandbox
	auditToolError = "tool-error" // a tools/call result with isError: true
	auditCancelled = "cancelled"  // the host sent notifications/cancelled for it
	auditHostGone  = "host-gone"  // the host left before the answer
	auditIDReused  = "id-reused"  // the host sent another request under its id while it was in flight
)

// ownOutcome names the end of a call mcpsandbox answered itself.
func ownOutcome(code int) string {
	switch code {
	case CodePolicyDenied:
		return "denied"
	case CodeCallTimeout:
		return "timeout"
	case CodeRateLimited:
		return "rate-limited"
	case CodeTooManyCalls:
		return "too-many-calls"
	case CodeServerCrashed:
		return "server-crashed"
	case CodeServerStopped:
		return "server-stopped"
	case CodeMessageTooLarge:
		return "too-large"
	case CodeQueueFull:
		return "queue-full"
	case CodeInvalidResponse:
		return "invalid-response"
	}
	return auditError
}

// begin starts the record of a host request, or returns nil when there is
// no audit log or the method is not audited.
func (a *auditor) begin(msg []byte, e *jsonrpc.Envelope, mk methodKind) *auditCall {
	if a == nil {
		return nil
	}
	var method string
	switch {
	case mk == mToolsCall:
		method = "tools/call"
	case e.MethodIs("prompts/get"):
		method = "prompts/get"
	case e.MethodIs("resources/read"):
		method = "resources/read"
	default:
		return nil
	}
	c := &auditCall{a: a, start: time.Now(), method: method, bytesIn: msgLen(msg)}
	params, ok := members(e.Params)
	if !ok {
		c.note = "params are not an object"
		return c
	}
	if method == "resources/read" {
		if uri, ok := stringValue(params["uri"]); ok {
			c.uri = cutText(a.mask.maskText(uri))
		} else {
			c.note = "no readable uri"
		}
		return c
	}
	name, ok := nameOf(params)
	switch {
	case !ok:
		c.note = "no name, or a name spelt more than one way"
	case method == "tools/call":
		c.tool = cutText(name)
	default:
		c.prompt = cutText(name)
	}
	if raw := params["arguments"]; raw != nil {
		out, cut, ok := a.mask.maskJSON(raw, auditArgsMax)
		switch {
		case !ok:
			c.note = "arguments are not JSON"
		case cut:
			c.args, c.argsLen = out, len(raw)
		default:
			c.args = out
		}
	}
	return c
}

// oversized records a request over --max-message, never read whole: its
// method comes from its head, and answer is what the host got (nil: none,
// its id was not found).
func (a *auditor) oversized(f *jsonrpc.Frame, answer []byte) {
	if a == nil {
		return
	}
	var sc jsonrpc.Scanner
	var b jsonrpc.Batch
	_ = sc.Scan(f.Head, &b)
	if b.IsArray || len(b.Msgs) != 1 || b.Msgs[0].Method == nil {
		return
	}
	e := &b.Msgs[0]
	mk := mOther
	if e.MethodIs("tools/call") {
		mk = mToolsCall
	}
	c := a.begin(nil, &jsonrpc.Envelope{Method: e.Method, MethodEscaped: e.MethodEscaped}, mk)
	if c == nil {
		return
	}
	c.bytesIn, c.note = int(f.Size), "over the message size limit; not read"
	if answer == nil {
		c.finish("too-large", nil, 0)
		return
	}
	c.endOwn(answer)
}

// endServer ends the record with the server's answer out (as relayed).
func (c *auditCall) endServer(e *jsonrpc.Envelope, out []byte) {
	if c == nil {
		return
	}
	switch {
	case e.HasError:
		if code, err := strconv.Atoi(string(jsonrpc.MemberValue(e.ErrorValue, "code"))); err == nil {
			c.finish(auditError, &code, msgLen(out))
		} else {
			c.finish(auditError, nil, msgLen(out))
		}
	case c.method == "tools/call" && bytes.Equal(jsonrpc.MemberValue(e.Result, "isError"), []byte("true")):
		c.finish(auditToolError, nil, msgLen(out))
	default:
		c.finish(auditOK, nil, msgLen(out))
	}
}

// endOwn ends the record with an error answer mcpsandbox made itself.
func (c *auditCall) endOwn(answer []byte) {
	if c == nil {
		return
	}
	code, err := strconv.Atoi(string(jsonrpc.MemberValue(jsonrpc.MemberValue(answer, "error"), "code")))
	if err != nil {
		c.finish(auditError, nil, msgLen(answer))
		return
	}
	c.finish(ownOutcome(code), &code, msgLen(answer))
}

// endUnanswered ends the record of a request the host gets no answer to.
func (c *auditCall) endUnanswered(outcome string) {
	if c == nil {
		return
	}
	c.finish(outcome, nil, 0)
}

func (c *auditCall) finish(outcome string, code *int, bytesOut int) {
	if c.ended.Swap(true) {
		return
	}
	d := time.Since(c.start)
	rec := auditRecord{
		Time: auditTime(c.start), Server: c.a.server, Session: c.a.session, Method: c.method,
		Tool: c.tool, Prompt: c.prompt, URI: c.uri, Arguments: c.args, ArgsBytes: c.argsLen, Note: c.note,
		Outcome: outcome, Code: code, DurationMS: math.Round(float64(d.Microseconds())) / 1e3,
		BytesIn: c.bytesIn, BytesOut: bytesOut,
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(rec) != nil {
		return
	}
	c.a.send(buf.Bytes())
}

// msgLen is a message's size without its line ending.
func msgLen(msg []byte) int { return len(bytes.TrimRight(msg, "\r\n")) }
