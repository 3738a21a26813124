package bench

import (
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// upstream is the egress benchmarks' test host: a TCP server on loopback
// speaking netclient's protocol (one command byte: 'e' echo, 'd' + 8-byte
// length: send that many bytes, 'u' + 8-byte length: read that many and
// answer the count). Loopback keeps the network itself out of the figures:
// what is left is the path to it.
func upstream(b testing.TB) (addr string) {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go serveUpstream(c)
		}
	}()
	return l.Addr().String()
}

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

// nameServer answers A queries for names (name → IPv4 address) on
// 127.0.0.1, NXDOMAIN for other names: the host-side resolver the
// confined client's names are resolved with (--resolver).
func nameServer(b testing.TB, names map[string]string) string {
	b.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	started := make(chan struct{})
	srv := &dns.Server{PacketConn: pc, NotifyStartedFunc: func() { close(started) }, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, req *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(req)
		q := req.Question[0]
		addr, ok := names[strings.TrimSuffix(q.Name, ".")]
		switch {
		case !ok:
			m.SetRcode(req, dns.RcodeNameError)
		case q.Qtype == dns.TypeA:
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: net.ParseIP(addr)})
		}
		w.WriteMsg(m)
	})}
	go srv.ActivateAndServe()
	<-started
	b.Cleanup(func() { srv.Shutdown() })
	return pc.LocalAddr().String()
}

// forwarder is the floor for any proxy between the client and upstream:
// a listener on loopback that dials upstream for each connection and
// copies both ways (io.Copy between TCP connections splices, as the egress
// proxy's relay does). Under egress each byte crosses TCP twice as well.
func forwarder(b testing.TB, upstream string) (addr string) {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go forward(c.(*net.TCPConn), upstream)
		}
	}()
	return l.Addr().String()
}

func forward(c *net.TCPConn, upstream string) {
	defer c.Close()
	u, err := net.Dial("tcp", upstream)
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
