package egress

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
)

// relay copies both ways until both ends are done. A clean end of one
// direction is passed on as a half-close (the other keeps flowing); an
// error in either aborts both. io.Copy between two *net.TCPConn splices
// on Linux: no bytes pass through user space, no buffer per connection.
func relay(client, up net.Conn) (bytesUp, bytesDown int64, err error) {
	var once sync.Once
	var first error
	fail := func(e error) {
		once.Do(func() {
			first = e
			client.Close()
			up.Close()
		})
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var e error
		bytesUp, e = io.Copy(up, client)
		if e == nil {
			e = closeWrite(up)
		}
		if e != nil {
			fail(e)
		}
	}()
	var e error
	bytesDown, e = io.Copy(client, up)
	if e == nil {
		e = closeWrite(client)
	}
	if e != nil {
		fail(e)
	}
	<-done
	fail(nil) // both done: close both
	return bytesUp, bytesDown, first
}

func closeWrite(c net.Conn) error {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// reset closes c with a RST rather than a FIN, so that the server's client
// sees the connection refused (ECONNRESET), not an empty answer.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

func addrPortOf(a net.Addr) netip.AddrPort {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.AddrPort()
	case *net.UDPAddr:
		return a.AddrPort()
	}
	ap, _ := netip.ParseAddrPort(a.String())
	return ap
}

// errStopped ends connections when Serve's stop closes them.
var errStopped = errors.New("egress: stopped")
