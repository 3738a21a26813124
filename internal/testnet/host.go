package testnet

import (
	"fmt"
	"net/http"
	"net/netip"

	"github.com/vishvananda/netlink"
)

// RegistryName and RegistryAddr are where a test serves a service of its
// own with AddHost (a package registry).
const RegistryName = "registry.example.test"

var RegistryAddr = netip.MustParseAddr("198.51.100.20")

// AddHost makes name a test host of the test's own, at addr (a
// documentation address none of the others has) in the upstream
// namespace, whose port serves h in the clear; its connections are
// recorded as the others'. Until the test ends.
func (e *Env) AddHost(name string, addr netip.Addr, port uint16, h http.Handler) *Listener {
	e.t.Helper()
	up, err := netlink.NewHandleAt(e.Upstream.handle)
	if err != nil {
		e.t.Fatalf("testnet: netlink in %s: %v", e.Upstream.Name, err)
	}
	defer up.Close()
	link, err := up.LinkByName("to-client")
	if err == nil {
		pfx, _ := netlink.ParseIPNet(addr.String() + "/24")
		err = up.AddrAdd(link, &netlink.Addr{IPNet: pfx})
	}
	if err != nil {
		e.t.Fatalf("testnet: address %s for %s: %v", addr, name, err)
	}
	ap := netip.AddrPortFrom(addr, port)
	nl, err := e.Upstream.Listen(ap.String())
	if err != nil {
		e.t.Fatalf("testnet: listening on %s in %s: %v", ap, e.Upstream.Name, err)
	}
	l, err := newListener(name, nl)
	if err != nil {
		e.t.Fatal(fmt.Errorf("testnet: %s: %w", name, err))
	}
	e.listeners[ap] = l
	e.DNS.Set(name, addr)
	e.serveHandler(l, h, nil)
	return l
}
