package sandbox

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/sandbox/internal/initstage"
	"golang.org/x/sys/unix"
)

// Egress capture (NetEgress, DESIGN §8): in the server's network namespace
// the supervisor adds a local route (table local) for each prefix of
// Capture.Local and a prohibit default route for IPv4 and IPv6, and listens
// on 127.0.0.1:53 (UDP and TCP, the DNS stub its resolv.conf names) and on
// every port of Capture.Ports (0.0.0.0, and [::] when a prefix is IPv6). So
// a TCP connect to a captured address and port lands on a listener, which
// sees the dialled address as the accepted connection's local one; to a
// captured address on another port it is refused (ECONNREFUSED); to any
// other address it fails at connect with EACCES, never dropped in silence
// nor accepted and reset. 127.0.0.0/8 and ::1 stay the namespace's own
// loopback, except that the capture ports are taken there too.
//
// The sockets are made by the init stage inside the namespace and handed
// over (initstage's init_net.c says why); the supervisor binds them and
// configures the namespace over the netlink one, before the server exists.

// CaptureSpec is what NetEgress lands on the supervisor's listeners.
type CaptureSpec struct {
	Ports []uint16       // TCP ports listened on, for every captured address
	Local []netip.Prefix // the captured ranges: local routes in the server's namespace
}

// Listeners are egress capture's listeners, in the server's network
// namespace, for Spec.Egress to serve.
type Listeners struct {
	DNS    net.PacketConn // 127.0.0.1:53/udp in the server's namespace
	DNSTCP net.Listener   // 127.0.0.1:53/tcp
	TCP    []net.Listener // accepted conns: LocalAddr() is the destination the server dialled
}

func (l Listeners) close() {
	if l.DNS != nil {
		l.DNS.Close()
	}
	if l.DNSTCP != nil {
		l.DNSTCP.Close()
	}
	for _, t := range l.TCP {
		t.Close()
	}
}

// dnsPort is the DNS stub's, which no capture port may take.
const dnsPort = 53

// errNoEgress: Start needs who serves the listeners; Describe does not.
var errNoEgress = &field.Error{Field: "Egress", Problem: "is not set: NetEgress needs the function that serves its listeners", Fix: "pass the egress proxy's Serve as {Egress}"}

// captureSockets checks spec's Capture and Egress against its network and
// says which sockets the init stage must make; nil without NetEgress.
func captureSockets(spec Spec) (*initstage.EgressSockets, CaptureSpec, error) {
	c := spec.Capture
	if spec.Resolver != nil {
		if spec.Net != NetNone {
			return nil, CaptureSpec{}, &field.Error{Field: "Resolver", Problem: "is only for NetNone, and the network is " + spec.Net.String(), Fix: "leave {Resolver} unset: NetEgress has {Egress}'s stub, NetHost the host's resolver"}
		}
		if len(c.Ports) > 0 || len(c.Local) > 0 || spec.Egress != nil {
			return nil, CaptureSpec{}, &field.Error{Field: "Capture", Problem: "is only for NetEgress, and the network is none", Fix: "leave {Capture} and {Egress} unset"}
		}
		// The DNS sockets alone: no TCP listener, no captured range.
		return &initstage.EgressSockets{}, CaptureSpec{}, nil
	}
	if spec.Net != NetEgress {
		if len(c.Ports) > 0 || len(c.Local) > 0 || spec.Egress != nil {
			name := "Capture"
			if len(c.Ports) == 0 && len(c.Local) == 0 {
				name = "Egress"
			}
			return nil, CaptureSpec{}, &field.Error{Field: name, Problem: "is only for NetEgress, and the network is " + spec.Net.String(), Fix: "set {Net} to NetEgress, or leave {Capture} and {Egress} unset"}
		}
		return nil, CaptureSpec{}, nil
	}
	var clean CaptureSpec
	v6 := false
	for _, p := range c.Local {
		if err := checkCapturePrefix(p); err != nil {
			return nil, CaptureSpec{}, err
		}
		if !slices.Contains(clean.Local, p) {
			clean.Local = append(clean.Local, p)
		}
		v6 = v6 || p.Addr().Is6()
	}
	if len(clean.Local) == 0 {
		return nil, CaptureSpec{}, &field.Error{Field: "Capture.Local", Problem: "names no address range, so no connect could reach the supervisor", Fix: "capture at least the range the DNS stub answers from (198.18.0.0/15)"}
	}
	for _, port := range c.Ports {
		switch {
		case port == 0:
			return nil, CaptureSpec{}, &field.Error{Field: "Capture.Ports", Value: "0", Problem: "is not a port to listen on", Fix: "give ports 1-65535"}
		case port == dnsPort:
			return nil, CaptureSpec{}, &field.Error{Field: "Capture.Ports", Value: "53", Problem: "is the DNS stub's port (127.0.0.1:53), which the server's resolv.conf names", Fix: "leave 53 out: the stub answers the server's names"}
		}
		if !slices.Contains(clean.Ports, port) {
			clean.Ports = append(clean.Ports, port)
		}
	}
	want := initstage.EgressSockets{TCP4: len(clean.Ports)}
	if v6 {
		want.TCP6 = len(clean.Ports)
	}
	if want.TCP4+want.TCP6 > initstage.MaxEgressListeners {
		return nil, CaptureSpec{}, &field.Error{Field: "Capture.Ports", Value: strconv.Itoa(len(clean.Ports)) + " ports", Problem: fmt.Sprintf("need %d listeners, more than the %d one start can hand over", want.TCP4+want.TCP6, initstage.MaxEgressListeners), Fix: "capture fewer ports"}
	}
	return &want, clean, nil
}

// checkCapturePrefix refuses a range a local route cannot take as given,
// or one within the namespace's loopback, which stays the server's own.
// A wider range holding loopback is fine: the loopback routes are more
// specific.
func checkCapturePrefix(p netip.Prefix) error {
	value := p.String()
	switch {
	case !p.IsValid():
		return &field.Error{Field: "Capture.Local", Value: value, Problem: "is not an address range", Fix: "give ranges such as 198.18.0.0/15 or 2001:db8::/32"}
	case p.Addr().Is4In6():
		return &field.Error{Field: "Capture.Local", Value: value, Problem: "is an IPv4-mapped IPv6 range", Fix: "give it as IPv4: " + netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96).String()}
	case p != p.Masked():
		return &field.Error{Field: "Capture.Local", Value: value, Problem: "has address bits set past its length", Fix: "give it as " + p.Masked().String()}
	case p.Addr().IsLoopback() && (p.Addr().Is6() || p.Bits() >= 8):
		return &field.Error{Field: "Capture.Local", Value: value, Problem: "lies within the server's own loopback (127.0.0.0/8, ::1), which egress capture leaves alone", Fix: "capture other ranges"}
	}
	return nil
}

// describeCapture is what Describe says of a capture: which ranges and
// ports reach the supervisor, and that nothing else does.
func describeCapture(c CaptureSpec) string {
	ports := make([]string, len(c.Ports))
	for i, p := range c.Ports {
		ports[i] = strconv.Itoa(int(p))
	}
	local := make([]string, len(c.Local))
	for i, p := range c.Local {
		local[i] = p.String()
	}
	tcp := "no TCP port"
	if len(ports) > 0 {
		tcp = "TCP ports " + strings.Join(ports, ", ")
	}
	return fmt.Sprintf("DNS to the supervisor's stub at 127.0.0.1:53; %s of %s to the supervisor's egress listeners (any other port there: connection refused); every other destination refused at connect (EACCES)", tcp, strings.Join(local, ", "))
}

// openCapture configures the server's namespace over socks' netlink socket
// and makes the listeners of c from socks; the sockets it wraps are its
// own (set to -1 in socks), the rest stay the caller's to close.
func openCapture(socks *initstage.Sockets, c CaptureSpec) (Listeners, error) {
	rt := newRTConn(socks.Netlink)
	v6 := len(socks.TCP6) > 0
	for _, p := range c.Local {
		r := route{dst: p, table: unix.RT_TABLE_LOCAL, typ: unix.RTN_LOCAL, scope: unix.RT_SCOPE_HOST, oif: loIndex}
		if err := rt.add(r); err != nil {
			return Listeners{}, routeError("adding the local route for "+p.String(), err)
		}
	}
	for _, def := range []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")} {
		err := rt.add(route{dst: def, table: unix.RT_TABLE_MAIN, typ: unix.RTN_PROHIBIT, scope: unix.RT_SCOPE_UNIVERSE})
		if err != nil && def.Addr().Is6() && !v6 && errors.Is(err, unix.EAFNOSUPPORT) {
			continue // a kernel without IPv6 has no IPv6 socket to refuse
		}
		if err != nil {
			return Listeners{}, routeError("adding the prohibit default route "+def.String(), err)
		}
	}

	var l Listeners
	fail := func(err error) (Listeners, error) {
		l.close()
		return Listeners{}, err
	}
	stub := &unix.SockaddrInet4{Port: dnsPort, Addr: [4]byte{127, 0, 0, 1}}
	dns, err := bindSocket(&socks.DNS, stub, false, false)
	if err == nil {
		l.DNS, err = net.FilePacketConn(dns)
		dns.Close()
	}
	if err != nil {
		return fail(bindError("the DNS stub's UDP socket on 127.0.0.1:53", err))
	}
	if l.DNSTCP, err = listenSocket(&socks.DNSTCP, stub, false); err != nil {
		return fail(bindError("the DNS stub's TCP socket on 127.0.0.1:53", err))
	}
	for i, port := range c.Ports {
		t, err := listenSocket(&socks.TCP4[i], &unix.SockaddrInet4{Port: int(port)}, false)
		if err != nil {
			return fail(bindError(fmt.Sprintf("the capture listener on 0.0.0.0:%d", port), err))
		}
		l.TCP = append(l.TCP, t)
	}
	for i, port := range c.Ports[:len(socks.TCP6)] {
		t, err := listenSocket(&socks.TCP6[i], &unix.SockaddrInet6{Port: int(port)}, true)
		if err != nil {
			return fail(bindError(fmt.Sprintf("the capture listener on [::]:%d", port), err))
		}
		l.TCP = append(l.TCP, t)
	}
	return l, nil
}

// bindSocket binds *fd to sa, non-blocking (v6only: IPv6 alone), and takes
// it over as a file (*fd = -1).
func bindSocket(fd *int, sa unix.Sockaddr, listen, v6only bool) (*os.File, error) {
	if v6only {
		if err := unix.SetsockoptInt(*fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1); err != nil {
			return nil, fmt.Errorf("IPV6_V6ONLY: %w", err)
		}
	}
	if err := unix.Bind(*fd, sa); err != nil {
		return nil, err
	}
	if listen {
		if err := unix.Listen(*fd, unix.SOMAXCONN); err != nil {
			return nil, fmt.Errorf("listen: %w", err)
		}
	}
	if err := unix.SetNonblock(*fd, true); err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(*fd), "egress-capture")
	*fd = -1
	return f, nil
}

// listenSocket binds and listens on *fd and wraps it as a net.Listener.
func listenSocket(fd *int, sa unix.Sockaddr, v6only bool) (net.Listener, error) {
	f, err := bindSocket(fd, sa, true, v6only)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return net.FileListener(f)
}

// routeError diagnoses a route the server's namespace refused.
func routeError(what string, err error) error {
	fix := ""
	switch {
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		fix = ": the supervisor needs CAP_NET_ADMIN over the server's network namespace (as root, or as the owner of its user namespace)"
	case errors.Is(err, unix.EAFNOSUPPORT), errors.Is(err, unix.EOPNOTSUPP):
		fix = ": this kernel lacks the address family or the route type (IPv6 ranges need IPv6)"
	case errors.Is(err, unix.EEXIST):
		fix = ": the server's network namespace already had it"
	}
	return fmt.Errorf("egress capture: %s in the server's network namespace: %w%s", what, err, fix)
}

// bindError diagnoses a listener the server's namespace refused.
func bindError(what string, err error) error {
	fix := ""
	switch {
	case errors.Is(err, unix.EACCES):
		fix = ": binding a port below 1024 there needs CAP_NET_BIND_SERVICE over the server's network namespace (as root, or as the owner of its user namespace)"
	case errors.Is(err, unix.EADDRNOTAVAIL):
		fix = ": the namespace's lo is not up"
	case errors.Is(err, unix.EADDRINUSE):
		fix = ": the port is taken twice"
	}
	return fmt.Errorf("egress capture: binding %s in the server's network namespace: %w%s", what, err, fix)
}
