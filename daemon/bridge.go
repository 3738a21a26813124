package daemon

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// The client side of connect: what `mcpsandbox connect NAME` does for the
// host that started it. It is started for every host session, so it does
// little: no config, no policy, one dial per socket.

// ConnectTo dials each socket in turn and asks for server name: the first
// daemon that has the server answers. A daemon that has no such server, or
// no daemon at all, passes on to the next socket. With none to be had it
// returns the refusal to answer the host with.
func ConnectTo(sockets []string, name string) (*Conn, *Refusal) {
	var first *Refusal
	var missing []string
	for _, sock := range sockets {
		c, a, err := Dial(sock, Hello{Connect: name})
		var nd *NoDaemonError
		switch {
		case errors.As(err, &nd):
			missing = append(missing, sock)
			continue
		case err != nil:
			return nil, unavailable(RefusedStart, err.Error())
		case a.OK:
			return c, nil
		}
		if a.Error.Code == 0 {
			a.Error.Code = supervisor.CodeServerUnavailable
		}
		if a.Error.Kind != RefusedNoServer {
			return nil, a.Error
		}
		if first == nil {
			first = a.Error
		}
	}
	if first != nil {
		return nil, first
	}
	return nil, unavailable(RefusedNoServer, fmt.Sprintf("no mcpsandbox daemon is running: nothing listens on %s. Start one with `mcpsandbox daemon --config FILE`, FILE listing the server %q (see `mcpsandbox help daemon`)",
		strings.Join(missing, " or "), name))
}

// Bridge copies the host's stream to the daemon and the daemon's to the
// host until the session ends: the host's EOF is passed on (the daemon
// then ends the session, answering what is in flight, and closes), and the
// daemon closing, or the host no longer reading, ends it at once.
func Bridge(c *Conn, hostIn io.Reader, hostOut io.Writer) {
	go func() {
		io.Copy(c, hostIn)
		c.CloseWrite()
	}()
	io.Copy(hostOut, c)
	c.Close()
}

// maxHostMessage bounds a host line the stand-in reads, as the relay's
// default --max-message does.
const maxHostMessage = 16 << 20

// Unavailable stands in for a server no daemon could give: it answers
// every request of the host with r's error (its code, message and reason
// in data.reason), ignores notifications and responses, and returns when
// the host closes its side.
func Unavailable(hostIn io.Reader, hostOut io.Writer, r *Refusal) error {
	lr := jsonrpc.NewLineReader(hostIn, maxHostMessage)
	lr.FindIDs = true
	var sc jsonrpc.Scanner
	var b jsonrpc.Batch
	var f jsonrpc.Frame
	answer := func(id []byte) []byte { return supervisor.UnavailableResponse(id, r.Message, r.Reason) }
	for {
		if err := lr.Next(&f); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		var out []byte
		switch {
		case f.Oversize:
			if f.FoundRequest && f.Found != nil {
				out = answer(f.Found)
			}
		case jsonrpc.IsBlank(f.Line):
		case sc.Scan(f.Line, &b) != nil:
			out = jsonrpc.NewError(nil, -32700, "parse error", nil)
		case b.IsArray:
			var parts [][]byte
			for i := range b.Msgs {
				if m := &b.Msgs[i]; m.Kind == jsonrpc.Request {
					parts = append(parts, []byte(strings.TrimSuffix(string(answer(m.ID(f.Line))), "\n")))
				}
			}
			if len(parts) > 0 {
				out = append(append([]byte("["), joinBytes(parts)...), "]\n"...)
			}
		case len(b.Msgs) == 1 && b.Msgs[0].Kind == jsonrpc.Request:
			out = answer(b.Msgs[0].ID(f.Line))
		}
		if out != nil {
			if _, err := hostOut.Write(out); err != nil {
				return err
			}
		}
	}
}

func joinBytes(parts [][]byte) []byte {
	var out []byte
	for i, p := range parts {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, p...)
	}
	return out
}
