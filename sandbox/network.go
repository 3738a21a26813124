package sandbox

import (
	"fmt"

	"github.com/mcpsandbox/mcpsandbox/sandbox/seccomp"
)

// Network is what a server's sockets can reach. One value decides three
// things that must agree: whether the server gets a network namespace of
// its own, which socket families seccomp lets it create, and which /etc
// files describe its network (etc.go).
type Network uint8

const (
	// NetNone is a network namespace of the server's own with only lo up,
	// and AF_UNIX sockets only: no host loopback, no abstract unix sockets
	// of the host, no address to reach. The zero value.
	NetNone Network = iota
	// NetHost shares the host's network namespace: AF_INET and AF_INET6
	// sockets, the host's resolv.conf and hosts.
	NetHost
	// NetEgress is egress through the supervisor (DESIGN §8): a network
	// namespace of the server's own with AF_INET and AF_INET6 sockets, in
	// which TCP to Spec.Capture's prefixes and ports lands on listeners
	// the supervisor serves (Spec.Egress), DNS goes to its stub on
	// 127.0.0.1:53 (the server's resolv.conf), and every other destination
	// is refused at connect (capture.go).
	NetEgress
)

// netMode is what one Network means to the sandbox.
type netMode struct {
	name      string
	what      string // what the server can reach, for Describe
	hostNetNS bool   // share the host's network namespace: nothing to unshare, no lo to bring up
	inet      bool   // AF_INET and AF_INET6 sockets besides AF_UNIX
	// etc adds the network's /etc files (hosts, resolv.conf) to files.
	etc func(files map[string][]byte) error
}

var networks = map[Network]netMode{
	NetNone:   {name: "none", what: "a network of its own with loopback only", etc: loopbackEtc},
	NetHost:   {name: "host", what: "the host's network, with its /etc/resolv.conf and /etc/hosts", hostNetNS: true, inet: true, etc: hostEtc},
	NetEgress: {name: "egress", what: "a network of its own whose TCP connects to the captured ranges and ports, and DNS, go to the supervisor; every other destination is refused at connect", inet: true, etc: egressEtc},
}

// mode is n's meaning; ok is false for a value no mode has.
func (n Network) mode() (netMode, bool) {
	m, ok := networks[n]
	return m, ok
}

// String is the mode's name as policies spell it: "none", "host", "egress".
func (n Network) String() string {
	if m, ok := n.mode(); ok {
		return m.name
	}
	return fmt.Sprintf("Network(%d)", uint8(n))
}

// SocketFamilies are the socket families the built-in seccomp profile
// allows a server with network n: AF_UNIX, plus AF_INET and AF_INET6 when n
// reaches an IP network. An unknown n gets AF_UNIX only (Start refuses it).
func (n Network) SocketFamilies() seccomp.Families {
	if m, _ := n.mode(); m.inet {
		return seccomp.AFUnix | seccomp.AFInet | seccomp.AFInet6
	}
	return seccomp.AFUnix
}

// socketFamilies are the socket families a server with network n gets:
// SocketFamilies, and with the supervisor's resolver under NetNone the
// datagram sockets its queries need.
func socketFamilies(n Network, resolver bool) seccomp.Families {
	if n == NetNone && resolver {
		return n.SocketFamilies() | seccomp.InetQueries
	}
	return n.SocketFamilies()
}

// serveOf is who serves the listeners a start hands over: Egress's, or
// the resolver's under NetNone; nil when none.
func serveOf(spec Spec) func(Listeners) error {
	if spec.Resolver != nil {
		return spec.Resolver
	}
	return spec.Egress
}
