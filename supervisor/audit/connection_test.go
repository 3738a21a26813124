package audit

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// A connection made during a tools/call is listed on the call's line, and
// has a line of its own naming the call's tool; a call's list is bounded.
func TestConnectionsAreTiedToTheCallInFlight(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l := openLog(t, Config{Path: path})
	p, _ := json.Marshal(map[string]any{"name": "fetch", "arguments": map[string]any{"url": "https://api.example.test/"}})
	call := l.Begin("tools/call", p, 80)
	call.AddConnection(ConnectionRef{ID: 1, Host: "api.example.test", Port: 443, Allowed: true})
	call.AddConnection(ConnectionRef{ID: 2, Host: "other.example.test", Port: 443})
	l.Connection(Connection{ID: 2, Start: time.Now(), Host: "other.example.test", Port: 443,
		Reason: "no --allow-host names other.example.test", Fix: "--allow-host other.example.test", Tools: []string{"fetch"}})
	call.EndAnswer(Answer{Bytes: 40})
	call.AddConnection(ConnectionRef{ID: 3, Host: "late.example.test", Port: 443}) // after its end: not listed

	busy := l.Begin("tools/call", []byte(`{"name":"crawl"}`), 20)
	for i := range maxCallConnections + 5 {
		busy.AddConnection(ConnectionRef{ID: uint64(10 + i), Host: fmt.Sprintf("h%d.example.test", i), Port: 80, Allowed: true})
	}
	busy.EndAnswer(Answer{Bytes: 10})
	l.Close()

	lines := readLines(t, path)
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3: %v", len(lines), lines)
	}
	conn, fetch, crawl := lines[0], lines[1], lines[2]
	if conn["connection"] != 2.0 || conn["host"] != "other.example.test" || conn["allowed"] != false ||
		conn["fix"] != "--allow-host other.example.test" || jsonText(conn["tools"]) != `["fetch"]` {
		t.Errorf("connection line = %v", conn)
	}
	if got := jsonText(fetch["connections"]); got != `[{"allowed":true,"connection":1,"host":"api.example.test","port":443},{"allowed":false,"connection":2,"host":"other.example.test","port":443}]` {
		t.Errorf("the call's line lists %s", got)
	}
	if n := len(crawl["connections"].([]any)); n != maxCallConnections || crawl["connections_more"] != 5.0 {
		t.Errorf("a busy call lists %d connections and %v more, want %d and 5", n, crawl["connections_more"], maxCallConnections)
	}
}
