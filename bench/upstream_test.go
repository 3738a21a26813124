package bench

import (
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"strconv"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/testnet"
)

// testHost is the egress benchmarks' network: internal/testnet's client
// and upstream namespaces joined by veth, with its DNS server. The test
// host listens at testnet.APIAddr in the upstream namespace, speaking
// netclient's protocol; every client runs in the client namespace, so each
// path crosses the same veth. Root only: testnet skips the benchmark
// otherwise.
type testHost struct {
	env      *testnet.Env
	port     uint16 // the test host's, at testnet.APIAddr
	resolver string // the test DNS (--resolver, and netclient's for unconfined runs)
}

// forwardName is the minimal forwarder's name in the test DNS: it listens
// on the client namespace's loopback.
const forwardName = "forward.example.test"

func startTestHost(b *testing.B) *testHost {
	b.Helper()
	e := testnet.Start(b, testnet.Options{})
	l, err := e.Upstream.Listen(netip.AddrPortFrom(testnet.APIAddr, 0).String())
	if err != nil {
		b.Fatal(err)
	}
	serve(b, l, serveUpstream)
	return &testHost{env: e, port: uint16(l.Addr().(*net.TCPAddr).Port), resolver: e.DNS.Addr.String()}
}

// addr is the test host by name, HOST:PORT.
func (h *testHost) addr() string {
	return net.JoinHostPort(testnet.APIName, strconv.Itoa(int(h.port)))
}

// serve runs handle for each connection l accepts until the benchmark ends.
func serve(b testing.TB, l net.Listener, handle func(net.Conn)) {
	b.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
}

// serveUpstream speaks netclient's protocol: one command byte, then 'e'
// echoes, 'd' + 8-byte length sends that many bytes, 'u' + 8-byte length
// reads that many and answers the count.
func serveUpstream(c net.Conn) {
	defer c.Close()
	var cmd [1]byte
	if _, err := io.ReadFull(c, cmd[:]); err != nil {
		return
	}
	if cmd[0] == 'e' {
		c.Write(cmd[:])
		io.Copy(c, c)
		return
	}
	var size [8]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return
	}
	n := int64(binary.BigEndian.Uint64(size[:]))
	buf := make([]byte, 256<<10)
	switch cmd[0] {
	case 'd':
		for n > 0 {
			w, err := c.Write(buf[:min(int64(len(buf)), n)])
			if err != nil {
				return
			}
			n -= int64(w)
		}
	case 'u':
		var got int64
		for got < n {
			r, err := c.Read(buf)
			got += int64(r)
			if err != nil {
				break
			}
		}
		binary.BigEndian.PutUint64(size[:], uint64(got))
		c.Write(size[:])
	}
}

// forwarder is the floor for any proxy between the client and the test
// host: a listener on the client namespace's loopback that dials the test
// host across the veth for each connection and copies both ways (io.Copy
// between TCP connections splices, as the egress proxy's relay does). As
// under egress, each byte crosses TCP twice. It answers as forwardName.
func (h *testHost) forwarder(b *testing.B) (addr string) {
	b.Helper()
	l, err := h.env.Client.Listen(netip.AddrPortFrom(testnet.Loopback, 0).String())
	if err != nil {
		b.Fatal(err)
	}
	dial := dialerIn(b, h.env.Client)
	to := netip.AddrPortFrom(testnet.APIAddr, h.port).String()
	serve(b, l, func(c net.Conn) { forward(c.(*net.TCPConn), dial, to) })
	h.env.DNS.Set(forwardName, testnet.Loopback)
	return net.JoinHostPort(forwardName, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
}

func forward(c *net.TCPConn, dial func(string) (net.Conn, error), upstream string) {
	defer c.Close()
	u, err := dial(upstream)
	if err != nil {
		return
	}
	up := u.(*net.TCPConn)
	defer up.Close()
	done := make(chan struct{})
	go func() {
		io.Copy(up, c)
		up.CloseWrite()
		close(done)
	}()
	io.Copy(c, up)
	c.CloseWrite()
	<-done
}

// dialerIn dials from inside ns: one thread stays there for the
// benchmark's life (a socket keeps the namespace it was made in), so a
// dial costs no thread of its own.
func dialerIn(b *testing.B, ns *testnet.NS) func(addr string) (net.Conn, error) {
	type dialed struct {
		c   net.Conn
		err error
	}
	type request struct {
		addr  string
		reply chan dialed
	}
	requests := make(chan request)
	b.Cleanup(func() { close(requests) })
	go ns.Do(func() error {
		for r := range requests {
			c, err := net.Dial("tcp", r.addr)
			r.reply <- dialed{c, err}
		}
		return nil
	})
	return func(addr string) (net.Conn, error) {
		reply := make(chan dialed, 1)
		requests <- request{addr, reply}
		d := <-reply
		return d.c, d.err
	}
}
