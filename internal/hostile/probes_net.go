//go:build linux

package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

const dialTimeout = 2 * time.Second

func tryDial(at *attempts, network, addr string) {
	c, err := net.DialTimeout(network, addr, dialTimeout)
	if err != nil {
		at.note("dial %s %s: %v", network, addr, err)
		return
	}
	c.Close()
	at.got("connected to %s %s", network, addr)
}

// probeHostLoopbackTCP dials the host's loopback listener in each form that
// reaches it, then any other destination outside the test gives.
func probeHostLoopbackTCP(a *Args, at *attempts) {
	if a.TCPAddr == "" {
		at.got("no host listener given: nothing tried")
		return
	}
	tryDial(at, "tcp", a.TCPAddr)
	if _, port, err := net.SplitHostPort(a.TCPAddr); err == nil {
		tryDial(at, "tcp", net.JoinHostPort("::1", port))
		tryDial(at, "tcp", net.JoinHostPort("0.0.0.0", port))
	}
	for _, addr := range a.OtherTCP {
		tryDial(at, "tcp", addr)
	}
}

func probeHostAbstractUnix(a *Args, at *attempts) {
	if a.AbstractSocket == "" {
		at.got("no abstract socket given: nothing tried")
		return
	}
	tryDial(at, "unix", "@"+a.AbstractSocket)
}

func probeHostUnixPath(a *Args, at *attempts) {
	if a.UnixSocket == "" {
		at.got("no unix socket path given: nothing tried")
		return
	}
	tryDial(at, "unix", a.UnixSocket)
}

// probeNetNamespace reads /proc/net (no netlink needed): a fresh network
// namespace has only lo, and the host's listener is not in its socket table.
func probeNetNamespace(a *Args, at *attempts) {
	ifaces, err := interfacesFromProc()
	if err != nil {
		at.got("cannot read /proc/net/dev (%v): the namespace is unverifiable", err)
	}
	for _, ifc := range ifaces {
		if ifc != "lo" {
			at.got("interface %s is visible", ifc)
		}
	}
	at.note("interfaces: %s", strings.Join(ifaces, ","))
	if _, port, err := net.SplitHostPort(a.TCPAddr); err == nil {
		var p int
		fmt.Sscan(port, &p)
		hexPort := fmt.Sprintf(":%04X ", p)
		for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
			b, err := os.ReadFile(f)
			if err != nil {
				at.note("read %s: %s", f, errText(err))
				continue
			}
			if strings.Contains(string(b), hexPort) {
				at.got("the host listener's port %s is in %s", port, f)
			}
		}
	}
}

func interfacesFromProc() ([]string, error) {
	f, err := os.Open("/proc/net/dev")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, _, ok := strings.Cut(sc.Text(), ":")
		if ok {
			names = append(names, strings.TrimSpace(name))
		}
	}
	return names, sc.Err()
}

func trySocket(at *attempts, what string, domain, typ, proto int) {
	fd, err := unix.Socket(domain, typ|unix.SOCK_CLOEXEC, proto)
	if err == nil {
		unix.Close(fd)
	}
	at.denied("socket("+what+")", err)
}

// probeSocketInet: without --net host, the seccomp profile allows no IP
// sockets at all.
func probeSocketInet(a *Args, at *attempts) {
	trySocket(at, "AF_INET, SOCK_STREAM", unix.AF_INET, unix.SOCK_STREAM, 0)
	trySocket(at, "AF_INET, SOCK_DGRAM", unix.AF_INET, unix.SOCK_DGRAM, 0)
	trySocket(at, "AF_INET6, SOCK_STREAM", unix.AF_INET6, unix.SOCK_STREAM, 0)
}

// probeSocketOtherFamilies: only AF_UNIX (and IP with --net host) is allowed;
// raw, netlink, vsock and crypto sockets are kernel attack surface. The one
// exception is NETLINK_ROUTE, which getifaddrs (libc, libuv) needs: it only
// reads the server's own namespace, which net_namespace checks.
func probeSocketOtherFamilies(a *Args, at *attempts) {
	if fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE); err == nil {
		unix.Close(fd)
		at.note("socket(AF_NETLINK, NETLINK_ROUTE) allowed (getifaddrs)")
	} else {
		at.note("socket(AF_NETLINK, NETLINK_ROUTE): %s", errText(err))
	}
	trySocket(at, "AF_PACKET, SOCK_RAW", unix.AF_PACKET, unix.SOCK_RAW, 0)
	trySocket(at, "AF_INET, SOCK_RAW", unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP)
	trySocket(at, "AF_NETLINK, NETLINK_AUDIT", unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT)
	trySocket(at, "AF_NETLINK, NETLINK_NETFILTER", unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_NETFILTER)
	trySocket(at, "AF_NETLINK, NETLINK_XFRM", unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_XFRM)
	trySocket(at, "AF_NETLINK, NETLINK_GENERIC", unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_GENERIC)
	trySocket(at, "AF_NETLINK, NETLINK_KOBJECT_UEVENT", unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_KOBJECT_UEVENT)
	trySocket(at, "AF_VSOCK", unix.AF_VSOCK, unix.SOCK_STREAM, 0)
	trySocket(at, "AF_ALG", unix.AF_ALG, unix.SOCK_SEQPACKET, 0)
	trySocket(at, "AF_KEY", unix.AF_KEY, unix.SOCK_RAW, 2 /* PF_KEY_V2 */)
	trySocket(at, "AF_BLUETOOTH", unix.AF_BLUETOOTH, unix.SOCK_RAW, 0)
}
