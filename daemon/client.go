package daemon

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"time"
)

// answerTimeout bounds the wait for a daemon's answer: a reload resolves
// every server anew, a connect only starts one.
const answerTimeout = 60 * time.Second

// NoDaemonError says that no daemon listens on a socket.
type NoDaemonError struct {
	Socket string
	Err    error
}

func (e *NoDaemonError) Error() string {
	return fmt.Sprintf("no mcpsandbox daemon listens on %s: %v", e.Socket, e.Err)
}

func (e *NoDaemonError) Unwrap() error { return e.Err }

// Conn is a client's connection to a daemon whose answer was ok: for
// connect, the host's MCP stream; for logs, the records.
type Conn struct {
	c *net.UnixConn
	r *bufio.Reader // holds what followed the answer
}

func (c *Conn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c *Conn) Write(p []byte) (int, error) { return c.c.Write(p) }

// CloseWrite tells the daemon the client will send no more (the host's
// EOF), while what the daemon still sends can be read.
func (c *Conn) CloseWrite() error { return c.c.CloseWrite() }
func (c *Conn) Close() error      { return c.c.Close() }

// Dial connects to the daemon at socket, sends h and reads its answer. The
// error is a *NoDaemonError when nothing listens there; an answer that is
// not ok comes back with a nil Conn (and its Error).
func Dial(socket string, h Hello) (*Conn, Answer, error) {
	var a Answer
	nc, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: socket, Net: "unix"})
	if err != nil {
		return nil, a, &NoDaemonError{Socket: socket, Err: unwrapOp(err)}
	}
	h.V = Version
	nc.SetDeadline(time.Now().Add(answerTimeout))
	r := bufio.NewReaderSize(nc, 64<<10)
	if err := writeLine(nc, h); err != nil {
		nc.Close()
		return nil, a, fmt.Errorf("talking to the daemon on %s: %w", socket, err)
	}
	if err := readJSONLine(r, maxAnswer, false, &a); err != nil {
		nc.Close()
		return nil, a, fmt.Errorf("the daemon on %s did not answer: %w", socket, err)
	}
	nc.SetDeadline(time.Time{})
	if !a.OK {
		nc.Close()
		if a.Error == nil {
			a.Error = &Refusal{Kind: RefusedHello, Message: "refused", Reason: "the daemon refused without saying why"}
		}
		return nil, a, nil
	}
	return &Conn{c: nc, r: r}, a, nil
}

// unwrapOp drops net.OpError's "dial unix PATH:" prefix, which the caller
// says better.
func unwrapOp(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}
