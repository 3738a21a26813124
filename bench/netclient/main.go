// Command netclient is the TCP client of the egress benchmarks, an MCP
// server run once direct and once confined: its tools time connections to
// the benchmark's upstream, so every figure is taken inside the client the
// same way whichever path it goes by. The upstream protocol (bench's
// upstream_test.go): one command byte, then 'e' echoes, 'd' + 8-byte
// length sends that many bytes, 'u' + 8-byte length reads that many and
// answers the count.
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type connectArgs struct {
	Addr     string `json:"addr"`               // HOST:PORT; a name is resolved first, timed apart
	Count    int    `json:"count"`              // connections, one after another
	Resolver string `json:"resolver,omitempty"` // ADDR:PORT of the DNS server to resolve with; "" = resolv.conf's
}

// connectTimes are per connection, in nanoseconds: the name's resolution
// (0 for an address), and connect to the first echoed byte.
type connectTimes struct {
	Resolve []int64 `json:"resolve"`
	Connect []int64 `json:"connect"`
}

type transferArgs struct {
	Addr     string `json:"addr"`
	Resolver string `json:"resolver,omitempty"`
	Bytes    int64  `json:"bytes"`
	Up       bool   `json:"up"` // the client sends; else the upstream does
}

type holdArgs struct {
	Addr  string `json:"addr"`
	Count int    `json:"count"` // more connections to keep open, each with a byte echoed
}

// held are the connections hold keeps open until release.
var held struct {
	sync.Mutex
	conns []net.Conn
}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "netclient", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "connect"}, func(ctx context.Context, _ *mcp.CallToolRequest, a connectArgs) (*mcp.CallToolResult, connectTimes, error) {
		var out connectTimes
		r := resolverOf(a.Resolver)
		for range a.Count {
			resolve, connect, err := timedConnect(ctx, r, a.Addr)
			if err != nil {
				return nil, out, err
			}
			out.Resolve = append(out.Resolve, resolve.Nanoseconds())
			out.Connect = append(out.Connect, connect.Nanoseconds())
		}
		return nil, out, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "transfer"}, func(ctx context.Context, _ *mcp.CallToolRequest, a transferArgs) (*mcp.CallToolResult, map[string]int64, error) {
		d, err := transfer(a)
		if err != nil {
			return nil, nil, err
		}
		return nil, map[string]int64{"ns": d.Nanoseconds()}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "hold"}, func(ctx context.Context, _ *mcp.CallToolRequest, a holdArgs) (*mcp.CallToolResult, map[string]int, error) {
		held.Lock()
		defer held.Unlock()
		for range a.Count {
			c, err := echoed(a.Addr)
			if err != nil {
				return nil, nil, fmt.Errorf("after %d connections held: %w", len(held.conns), err)
			}
			held.conns = append(held.conns, c)
		}
		return nil, map[string]int{"held": len(held.conns)}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "release"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, map[string]int, error) {
		held.Lock()
		defer held.Unlock()
		n := len(held.conns)
		for _, c := range held.conns {
			c.Close()
		}
		held.conns = nil
		return nil, map[string]int{"released": n}, nil
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// resolverOf resolves with the DNS server at addr, or resolv.conf's for "".
func resolverOf(addr string) *net.Resolver {
	if addr == "" {
		return net.DefaultResolver
	}
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
}

// timedConnect resolves addr's host when it is a name, then connects to
// it and has one byte echoed: until then no byte has crossed end to end.
func timedConnect(ctx context.Context, r *net.Resolver, addr string) (resolve, connect time.Duration, err error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, 0, err
	}
	if net.ParseIP(host) == nil {
		start := time.Now()
		ips, err := r.LookupIP(ctx, "ip4", host)
		resolve = time.Since(start)
		if err != nil {
			return 0, 0, err
		}
		addr = net.JoinHostPort(ips[0].String(), port)
	}
	start := time.Now()
	c, err := echoed(addr)
	connect = time.Since(start)
	if err != nil {
		return 0, 0, err
	}
	return resolve, connect, c.Close()
}

// echoed is a connection to addr over which one byte went and came back.
func echoed(addr string) (net.Conn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	b := []byte{'e'}
	_, err = c.Write(b)
	if err == nil {
		_, err = io.ReadFull(c, b)
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("echo from %s: %w", addr, err)
	}
	return c, nil
}

// transfer moves a.Bytes over one connection, timed from the connect to
// the last byte (down) or the upstream's count of them (up).
func transfer(a transferArgs) (time.Duration, error) {
	buf := make([]byte, 256<<10)
	start := time.Now()
	c, err := (&net.Dialer{Resolver: resolverOf(a.Resolver)}).Dial("tcp", a.Addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	cmd := []byte{'d', 0, 0, 0, 0, 0, 0, 0, 0}
	if a.Up {
		cmd[0] = 'u'
	}
	binary.BigEndian.PutUint64(cmd[1:], uint64(a.Bytes))
	if _, err := c.Write(cmd); err != nil {
		return 0, err
	}
	var moved int64
	if a.Up {
		for moved < a.Bytes {
			n, err := c.Write(buf[:min(int64(len(buf)), a.Bytes-moved)])
			moved += int64(n)
			if err != nil {
				return 0, err
			}
		}
		var count [8]byte
		if _, err := io.ReadFull(c, count[:]); err != nil {
			return 0, fmt.Errorf("the upstream's count: %w", err)
		}
		if got := int64(binary.BigEndian.Uint64(count[:])); got != a.Bytes {
			return 0, fmt.Errorf("the upstream counted %d bytes of %d", got, a.Bytes)
		}
		return time.Since(start), nil
	}
	for moved < a.Bytes {
		n, err := c.Read(buf)
		moved += int64(n)
		if err != nil {
			if errors.Is(err, io.EOF) && moved == a.Bytes {
				break
			}
			return 0, fmt.Errorf("after %d bytes of %d: %w", moved, a.Bytes, err)
		}
	}
	return time.Since(start), nil
}
