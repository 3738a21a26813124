package audit

import (
	"math"
	"time"
)

// maxCallConnections bounds the connections one call's line lists: a
// hostile server opening thousands during one call must not make a large
// line (the rest are counted in connections_more).
const maxCallConnections = 32

// Connection is one connection a sandboxed server opened under egress
// (--allow-host), as its audit line says it.
type Connection struct {
	ID        uint64    // the server's connection number, from 1: what a call's line refers to
	Start     time.Time // when the server connected
	Host      string    // the name it asked for, or the address it dialled
	Port      uint16
	Address   string        // the address dialled on the host side ("" when refused before)
	Allowed   bool          // the policy allowed it (Reason says why not, Fix what would allow it)
	Reason    string        // why it was refused, or why the dial failed
	Fix       string        // the setting that would allow it ("--allow-host db.example.test:5432")
	Duration  time.Duration // from connect to close
	BytesUp   int64         // server → remote
	BytesDown int64         // remote → server
	Tools     []string      // the tools/call requests in flight when it was made, by tool name
}

// ConnectionRef is a connection as the line of a call in flight lists it.
type ConnectionRef struct {
	ID      uint64 `json:"connection"`
	Host    string `json:"host"`
	Port    uint16 `json:"port"`
	Allowed bool   `json:"allowed"`
}

type connectionRecord struct {
	Time       string   `json:"time"`
	Server     string   `json:"server"`
	Session    string   `json:"session"`
	Connection uint64   `json:"connection"`
	Host       string   `json:"host"`
	Port       uint16   `json:"port"`
	Address    string   `json:"address,omitempty"`
	Allowed    bool     `json:"allowed"`
	Reason     string   `json:"reason,omitempty"`
	Fix        string   `json:"fix,omitempty"`
	DurationMS float64  `json:"duration_ms"`
	BytesUp    int64    `json:"bytes_up"`
	BytesDown  int64    `json:"bytes_down"`
	Tools      []string `json:"tools,omitempty"`
}

// Connection writes c's line, once it has ended. Nil l: nothing.
func (l *Log) Connection(c Connection) {
	if l == nil {
		return
	}
	tools := c.Tools
	if len(tools) > maxCallConnections {
		tools = tools[:maxCallConnections]
	}
	for i, t := range tools {
		tools[i] = cutText(t)
	}
	rec := connectionRecord{
		Time: timeOf(c.Start), Server: l.server, Session: l.session, Connection: c.ID,
		Host: cutText(c.Host), Port: c.Port, Address: c.Address, Allowed: c.Allowed,
		Reason: cutText(c.Reason), Fix: cutText(c.Fix),
		DurationMS: math.Round(float64(c.Duration.Microseconds())) / 1e3,
		BytesUp:    c.BytesUp, BytesDown: c.BytesDown, Tools: tools,
	}
	l.sendRecord(rec)
}

// AddConnection lists a connection the server opened while c was in
// flight on c's line. Nil c, or c already ended: nothing.
func (c *Call) AddConnection(ref ConnectionRef) {
	if c == nil || c.ended.Load() {
		return
	}
	c.connMu.Lock()
	defer c.connMu.Unlock()
	if len(c.conns) < maxCallConnections {
		ref.Host = cutText(ref.Host)
		c.conns = append(c.conns, ref)
	} else {
		c.connsMore++
	}
}

// connections is what c's line lists; taken once, at its end.
func (c *Call) connections() ([]ConnectionRef, int) {
	c.connMu.Lock()
	defer c.connMu.Unlock()
	return c.conns, c.connsMore
}
