package audit

import (
	"bytes"
	"encoding/json"
	"time"
)

// ServerRequest is one request of the server's to the host
// (elicitation/create, sampling/createMessage, roots/list, …), as its
// audit line says it: what the policy made of it, not the host's answer.
type ServerRequest struct {
	Method     string // as the server sent it
	Via        string // "request" (a classic session) or "input-required" (a 2026-07-28 result)
	Mode       string // the policy's mode for its kind: allow, deny, decline
	Outcome    string // relayed, denied, declined, rate-limited, url-not-allowed
	Reason     string // why it was not relayed
	URL        string // a URL-mode elicitation's URL (masked)
	Marked     bool   // it claimed to be mcpsandbox's and reached the host marked as the server's
	Suppressed int    // lines of requests not relayed left out before this one (a flood)
}

// serverRequestRecord is a ServerRequest's line. "from":"server" tells it
// from a host request's line, which has the same "method" key.
type serverRequestRecord struct {
	Time       string `json:"time"`
	Server     string `json:"server"`
	Session    string `json:"session"`
	From       string `json:"from"`
	Method     string `json:"method"`
	Via        string `json:"via"`
	Mode       string `json:"mode"`
	Outcome    string `json:"outcome"`
	Reason     string `json:"reason,omitempty"`
	URL        string `json:"url,omitempty"`
	Marked     bool   `json:"marked,omitempty"`
	Suppressed int    `json:"suppressed,omitempty"`
}

// ServerRequest writes s's line, as it is decided. Nil l: nothing.
func (l *Log) ServerRequest(s ServerRequest) {
	if l == nil {
		return
	}
	rec := serverRequestRecord{
		Time: timeOf(time.Now()), Server: l.server, Session: l.session, From: "server",
		Method: cutText(s.Method), Via: s.Via, Mode: s.Mode, Outcome: s.Outcome,
		Reason: cutText(s.Reason), URL: cutText(l.mask.maskText(s.URL)), Marked: s.Marked, Suppressed: s.Suppressed,
	}
	l.sendRecord(rec)
}

// sendRecord queues rec as one line, its strings as written (no HTML
// escaping).
func (l *Log) sendRecord(rec any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(rec) == nil {
		l.send(buf.Bytes())
	}
}
