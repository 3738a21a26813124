package testnet

import (
	"fmt"
	"net"
	"os/exec"
	"runtime"

	"github.com/vishvananda/netns"
)

// NS is a network namespace of the test's own, held by a descriptor.
type NS struct {
	Name   string // for messages only
	handle netns.NsHandle
}

// newNS makes a namespace on a thread of its own, which then dies with the
// goroutine (it is never unlocked), so no other goroutine runs in it.
func newNS(name string) (*NS, error) {
	ns := &NS{Name: name}
	err := onThread(func() error {
		h, err := netns.New()
		ns.handle = h
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("testnet: making network namespace %s: %w", name, err)
	}
	return ns, nil
}

// onThread runs f on a locked OS thread that is thrown away afterwards: the
// thread may be left in another namespace.
func onThread(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		errc <- f()
	}()
	return <-errc
}

// Do runs f inside the namespace. Sockets f makes stay in it.
func (ns *NS) Do(f func() error) error {
	return onThread(func() error {
		if err := netns.Set(ns.handle); err != nil {
			return fmt.Errorf("testnet: entering %s: %w", ns.Name, err)
		}
		return f()
	})
}

// Listen makes a TCP listener inside the namespace.
func (ns *NS) Listen(addr string) (net.Listener, error) {
	var l net.Listener
	err := ns.Do(func() (err error) {
		l, err = net.Listen("tcp", addr)
		return err
	})
	return l, err
}

// ListenPacket makes a UDP socket inside the namespace.
func (ns *NS) ListenPacket(addr string) (net.PacketConn, error) {
	var c net.PacketConn
	err := ns.Do(func() (err error) {
		c, err = net.ListenPacket("udp", addr)
		return err
	})
	return c, err
}

// Start starts cmd inside the namespace: the child is cloned from a thread
// that has entered it. That thread then returns to the host's namespace and
// lives on, so a Pdeathsig the caller set fires only when the test process
// dies; if it cannot return, it is thrown away.
func (ns *NS) Start(cmd *exec.Cmd) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		home, err := netns.Get()
		if err != nil {
			errc <- err
			return
		}
		defer home.Close()
		if err := netns.Set(ns.handle); err != nil {
			errc <- fmt.Errorf("testnet: entering %s: %w", ns.Name, err)
			return
		}
		errc <- cmd.Start()
		if netns.Set(home) == nil {
			runtime.UnlockOSThread()
		}
	}()
	return <-errc
}

// Close drops the test's hold on the namespace; it goes when nothing else
// (a process, a socket) is in it.
func (ns *NS) Close() error { return ns.handle.Close() }
