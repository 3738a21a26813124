//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
)

// stdinTap reads the server's stdin on the SDK's behalf and notes, line by
// line before the SDK sees it, what the flood tool needs: the JSON-RPC id of
// the latest flood call (so a kind can answer that very call with raw
// bytes; flood calls must not overlap) and the relay's answers to the
// flood's own requests.
type stdinTap struct {
	r       io.Reader // os.Stdin
	partial []byte

	deaf atomic.Bool // stop reading: Read blocks for good

	mu        sync.Mutex
	floodID   []byte
	errors    int
	lastError string
}

func (t *stdinTap) Read(p []byte) (int, error) {
	if t.deaf.Load() {
		select {} // what the relay writes piles up in the pipe
	}
	n, err := t.r.Read(p)
	data := p[:n]
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		t.partial = append(t.partial, data[:i]...)
		t.note(t.partial)
		t.partial, data = t.partial[:0], data[i+1:]
	}
	t.partial = append(t.partial, data...)
	return n, err
}

func (t *stdinTap) Close() error { return os.Stdin.Close() }

func (t *stdinTap) note(line []byte) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(line, &m) != nil || m.ID == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case m.Method == "tools/call" && m.Params.Name == "flood":
		t.floodID = bytes.Clone(m.ID)
	case m.Method == "" && m.Error != nil && strings.HasPrefix(string(m.ID), `"`+floodIDPrefix):
		t.errors++
		t.lastError = m.Error.Message
	}
}

// stopReading makes the server stop reading its stdin (after the read in
// progress), as a server that hangs in all but its writing does.
func (t *stdinTap) stopReading() { t.deaf.Store(true) }

func (t *stdinTap) lastFloodID() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.floodID
}

type floodAnswers struct {
	Errors    int    `json:"errors"`
	LastError string `json:"last_error"`
}

func (t *stdinTap) answers() floodAnswers {
	t.mu.Lock()
	defer t.mu.Unlock()
	return floodAnswers{t.errors, t.lastError}
}
