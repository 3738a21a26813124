package daemon

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// The socket protocol. A client's first line is a Hello, one JSON object;
// the daemon's first line is an Answer to it. For connect, once the answer
// is ok, the raw MCP byte stream follows both ways on the same connection
// (the host's session, one instance's); for logs, the records follow, one
// per line, from the daemon. Every other control request is one hello and
// one answer. V is the protocol's version: a daemon refuses a hello of a
// version it does not speak (kind "version"), so a later change can be told
// from garbage.

// Version is the socket protocol's version, in every Hello and Answer.
const Version = 1

// Control requests a Hello may name.
const (
	ControlStatus  = "status"
	ControlRestart = "restart"
	ControlLogs    = "logs"
	ControlReload  = "reload"
)

// Hello is a client's first line: either Connect (a server's name: become
// a host session of a fresh instance of it) or Control.
type Hello struct {
	V       int    `json:"v"`
	Connect string `json:"connect,omitempty"`
	Control string `json:"control,omitempty"` // ControlStatus, ...
	Server  string `json:"server,omitempty"`  // restart and logs: which server
	Follow  bool   `json:"follow,omitempty"`  // logs: stream new records until the client leaves
}

// Answer is the daemon's first line. OK false comes with Error; otherwise
// the member of the request's kind is set.
type Answer struct {
	V        int      `json:"v"`
	OK       bool     `json:"ok"`
	Error    *Refusal `json:"error,omitempty"`
	Instance string   `json:"instance,omitempty"` // connect: the instance serving the session, NAME#N
	Status   *Status  `json:"status,omitempty"`
	// Restarted names the instances restart restarted.
	Restarted []string      `json:"restarted,omitempty"`
	Reload    *ReloadReport `json:"reload,omitempty"`
}

// Refusal says why the daemon would not do what a hello asked.
type Refusal struct {
	// Code is the JSON-RPC error code `connect` answers the host's
	// requests with (supervisor.CodeServerUnavailable); 0 for control.
	Code    int    `json:"code,omitempty"`
	Kind    string `json:"kind"`    // one of the Refusal kinds below
	Message string `json:"message"` // short, for the host's user ("server unavailable")
	Reason  string `json:"reason"`  // why, and what fixes it
}

// Refusal kinds.
const (
	RefusedNoServer     = "no-server"     // the config names no such server
	RefusedPeer         = "peer"          // the client's uid may not use it
	RefusedMaxInstances = "max-instances" // the server is at its bound
	RefusedStart        = "start"         // the instance could not be started
	RefusedVersion      = "version"       // a protocol version the daemon does not speak
	RefusedHello        = "hello"         // the first line was no hello
	RefusedReload       = "reload"        // the new config has an error; the old one runs on
	RefusedShutdown     = "shutdown"      // the daemon is shutting down
)

func (r *Refusal) Error() string { return r.Reason }

// Lines bound what either side reads as a first line: a hello is small;
// an answer holds a status of every instance.
const (
	maxHello  = 64 << 10
	maxAnswer = 16 << 20
)

// helloTimeout bounds how long a client may take to say hello, so a
// client that connects and says nothing does not hold a goroutine.
const helloTimeout = 10 * time.Second

// writeLine writes v as one JSON line.
func writeLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

var errLineTooLong = errors.New("line too long")

// readLine reads one '\n'-terminated line of at most max bytes from r,
// leaving what follows it in r.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > max+1 {
			return nil, errLineTooLong
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return bytes.TrimSuffix(line, []byte("\n")), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return nil, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

// readJSONLine reads one line into v. Strict makes unknown members an
// error (the daemon reads hellos so: a misspelt key is not ignored);
// clients read answers leniently, so a daemon may add members.
func readJSONLine(r *bufio.Reader, max int, strict bool, v any) error {
	line, err := readLine(r, max)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("not a JSON object of the daemon protocol: %w", err)
	}
	return nil
}
