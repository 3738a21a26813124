package audit

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
)

// Call is one audited host request, from its arrival to its end. Its
// methods may be called on nil (a request not audited) and from any
// goroutine; the first End wins, later ones do nothing, whichever path of
// the relay sees the request end first.
type Call struct {
	l                        *Log
	start                    time.Time
	method                   string
	tool                     string
	prompt                   string
	uri                      string
	args                     json.RawMessage
	argsLen                  int // the arguments' size as sent, when cut
	note                     string
	held                     string // the item the lock holds for approval, when that refused it
	approval                 *Approval
	secretPath, secretFormat string // where its arguments carry a secret, and which format
	bytesIn                  int
	ended                    atomic.Bool

	connMu    sync.Mutex      // connections come from the egress proxy's goroutines
	conns     []ConnectionRef // connections the server opened while the call was in flight
	connsMore int             // beyond maxCallConnections
}

// record is one line of the audit log. Its keys are the file's format
// (docs/policy.md): do not change them.
type record struct {
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
	Held       string          `json:"held,omitempty"` // the item held for approval that refused it
	Approval   *Approval       `json:"approval,omitempty"`
	Path       string          `json:"path,omitempty"`   // where the arguments carry a secret (never its value)
	Secret     string          `json:"secret,omitempty"` // the secret's format
	Outcome    Outcome         `json:"outcome"`
	Code       *int            `json:"code,omitempty"`
	DurationMS float64         `json:"duration_ms"`
	BytesIn    int             `json:"bytes_in"`
	BytesOut   int             `json:"bytes_out"`
	// Connections the server opened while the call was in flight (egress).
	Connections     []ConnectionRef `json:"connections,omitempty"`
	ConnectionsMore int             `json:"connections_more,omitempty"`
}

// Audited reports whether requests of method (as decoded, unescaped) are
// audited.
func Audited(method string) bool {
	switch method {
	case "tools/call", "prompts/get", "resources/read":
		return true
	}
	return false
}

// Begin starts the record of a host request as it arrives: method as
// decoded, params its raw params member (nil: none), bytesIn the request's
// size without its line ending. It returns nil when l is nil or the method
// is not audited.
func (l *Log) Begin(method string, params []byte, bytesIn int) *Call {
	if l == nil || !Audited(method) {
		return nil
	}
	c := &Call{l: l, start: time.Now(), method: method, bytesIn: bytesIn}
	var m map[string]json.RawMessage
	if json.Unmarshal(params, &m) != nil || m == nil {
		c.note = "params are not an object"
		return c
	}
	if method == "resources/read" {
		if uri, ok := jsonrpc.StringValue(m["uri"]); ok {
			c.uri = cutText(l.mask.maskText(uri))
		} else {
			c.note = "no readable uri"
		}
		return c
	}
	name, ok := jsonrpc.ExactMember(m, "name")
	switch {
	case !ok:
		c.note = "no name, or a name spelt more than one way"
	case method == "tools/call":
		c.tool = cutText(name)
	default:
		c.prompt = cutText(name)
	}
	if raw := m["arguments"]; raw != nil {
		out, cut, ok := l.mask.maskJSON(raw, argsMax)
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

// BeginOversized starts the record of a request over the message size
// limit, never read whole: only its method (read from its head) and its
// size are known. nil when l is nil or the method is not audited.
func (l *Log) BeginOversized(method string, bytesIn int) *Call {
	if l == nil || !Audited(method) {
		return nil
	}
	return &Call{l: l, start: time.Now(), method: method, bytesIn: bytesIn, note: "over the message size limit; not read"}
}

// Answer is what the relay read of the server's answer to an audited
// request, as relayed to the host.
type Answer struct {
	Error   bool   // it is a JSON-RPC error
	Code    []byte // the error's code member as sent; nil or not an integer: none
	IsError bool   // its result says isError: true
	Bytes   int    // its size as the host got it, without the line ending
}

// Tool is the tools/call's tool name as the host gave it ("" for other
// methods or nil c).
func (c *Call) Tool() string {
	if c == nil {
		return ""
	}
	return c.tool
}

// Hold names the item held for approval that refuses the request, for
// its line's "held"; call it before End.
func (c *Call) Hold(item string) {
	if c != nil {
		c.held = item
	}
}

// Approval is a person's decision on a call, as its line records it.
type Approval struct {
	Channel  string `json:"channel"`  // input-required, elicitation, deferred, session
	Decision string `json:"decision"` // allow-once, allow-session, deny, cancel, timeout, ...
	WaitedMs int64  `json:"waitedMs"` // from the question to the answer
	ID       string `json:"id,omitempty"`
}

// Approve records the approval decided on the request; call it before End.
func (c *Call) Approve(a Approval) {
	if c != nil {
		c.approval = &a
	}
}

// SecretAt records where the request's arguments carry a secret (path,
// e.g. "arguments.token") and its format. The arguments stay on the line:
// the masker knows secrets by their format as the scan that refused the
// call does (Config.Secrets), so the value is already "***".
func (c *Call) SecretAt(path, format string) {
	if c != nil {
		c.secretPath, c.secretFormat = path, format
	}
}

// EndAnswer ends the record with the server's answer: Error (with its
// code), ToolError for a tools/call result with isError, else Answered.
func (c *Call) EndAnswer(a Answer) {
	if c == nil {
		return
	}
	switch {
	case a.Error:
		if code, err := strconv.Atoi(string(a.Code)); err == nil {
			c.finish(Error, &code, a.Bytes)
		} else {
			c.finish(Error, nil, a.Bytes)
		}
	case a.IsError && c.method == "tools/call":
		c.finish(ToolError, nil, a.Bytes)
	default:
		c.finish(Answered, nil, a.Bytes)
	}
}

// EndCode ends the record with an error answer carrying code (one
// mcpsandbox made itself), of bytesOut bytes without the line ending.
func (c *Call) EndCode(o Outcome, code, bytesOut int) {
	if c == nil {
		return
	}
	c.finish(o, &code, bytesOut)
}

// End ends the record with no code: a request the host gets no answer to
// (Cancelled, HostGone, IDReused, TooLarge with no id found; bytesOut 0).
func (c *Call) End(o Outcome, bytesOut int) {
	if c == nil {
		return
	}
	c.finish(o, nil, bytesOut)
}

func (c *Call) finish(o Outcome, code *int, bytesOut int) {
	if c.ended.Swap(true) {
		return
	}
	d := time.Since(c.start)
	rec := record{
		Time: timeOf(c.start), Server: c.l.server, Session: c.l.session, Method: c.method,
		Tool: c.tool, Prompt: c.prompt, URI: c.uri, Arguments: c.args, ArgsBytes: c.argsLen, Note: c.note, Held: c.held,
		Approval: c.approval, Path: c.secretPath, Secret: c.secretFormat,
		Outcome: o, Code: code, DurationMS: math.Round(float64(d.Microseconds())) / 1e3,
		BytesIn: c.bytesIn, BytesOut: bytesOut,
	}
	rec.Connections, rec.ConnectionsMore = c.connections()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(rec) != nil {
		return
	}
	c.l.send(buf.Bytes())
}
