package testnet

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Accepted is one connection a listener accepted.
type Accepted struct {
	From netip.AddrPort
	At   time.Time
}

// Listener is a TCP listener of a test host that records every connection
// made to it, so a test can show that a refused client reached nothing.
type Listener struct {
	Host string         // the test host's name, e.g. "api.example.test"
	Addr netip.AddrPort // where it listens

	// file is the listening socket as a file, non-blocking: a
	// net.TCPListener's raw connection cannot wait for readiness.
	file *os.File
	raw  syscall.RawConn
	addr net.Addr

	// mu is held from taking a connection off the kernel's queue to
	// recording it, so Count never misses one between the two.
	mu   sync.Mutex
	seen []Accepted
}

// newListener takes over l (it closes it): the socket lives on as the
// Listener's own descriptor.
func newListener(host string, l net.Listener) (*Listener, error) {
	defer l.Close()
	lraw, err := l.(*net.TCPListener).SyscallConn()
	if err != nil {
		return nil, err
	}
	dup := -1
	cerr := lraw.Control(func(fd uintptr) {
		if dup, err = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0); err == nil {
			err = unix.SetNonblock(dup, true)
		}
	})
	if err = errors.Join(cerr, err); err != nil {
		if dup >= 0 {
			unix.Close(dup)
		}
		return nil, err
	}
	file := os.NewFile(uintptr(dup), host) // non-blocking: in the runtime's poller
	raw, err := file.SyscallConn()
	if err != nil {
		file.Close()
		return nil, err
	}
	return &Listener{Host: host, Addr: l.Addr().(*net.TCPAddr).AddrPort(), file: file, raw: raw, addr: l.Addr()}, nil
}

// Accept takes the next connection and records it.
func (l *Listener) Accept() (net.Conn, error) {
	var (
		nfd  int
		from unix.Sockaddr
		aerr error
	)
	err := l.raw.Read(func(fd uintptr) bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		nfd, from, aerr = unix.Accept4(int(fd), unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if errors.Is(aerr, unix.EAGAIN) {
			return false // wait until readable
		}
		if aerr == nil {
			l.seen = append(l.seen, Accepted{From: addrPort(from), At: time.Now()})
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if aerr != nil {
		return nil, aerr
	}
	f := os.NewFile(uintptr(nfd), "accepted")
	defer f.Close()
	return net.FileConn(f)
}

func addrPort(sa unix.Sockaddr) netip.AddrPort {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port))
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(a.Addr), uint16(a.Port))
	}
	return netip.AddrPort{}
}

// Close stops listening.
func (l *Listener) Close() error { return l.file.Close() }

// Connections lists the connections accepted so far.
func (l *Listener) Connections() []Accepted {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Accepted(nil), l.seen...)
}

// Count is how many connections were made to the listener so far: those
// accepted and those the kernel still holds for accepting (a connection
// whose handshake finished is counted even if it was never served).
func (l *Listener) Count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	queued := 0
	l.raw.Control(func(fd uintptr) {
		// For a listening socket, tcpi_unacked is the accept queue's length.
		if info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
			queued = int(info.Unacked)
		}
	})
	return len(l.seen) + queued
}

// String names the listener for messages: "api.example.test 198.51.100.10:443".
func (l *Listener) String() string { return l.Host + " " + l.Addr.String() }

// asNetListener lets http.Server and friends serve it.
type asNetListener struct{ *Listener }

func (a asNetListener) Addr() net.Addr { return a.addr }
