package testnet

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
)

// The test hosts, all in the upstream namespace, and the client side's own
// address. Only documentation addresses (RFC 5737).
const (
	APIName    = "api.example.test"    // web: 80, 443 (and 8080, a port a policy naming the host leaves out)
	DBName     = "db.example.test"     // PostgreSQL on 5432 (and 5433, another port, which hangs up)
	OtherName  = "other.example.test"  // a host the policy does not name: 80, 443, 5432 (hangs up)
	RebindName = "rebind.example.test" // first answers APIAddr, then loopback
)

var (
	ClientAddr = netip.MustParseAddr("198.51.100.1") // the client namespace's own address (the "host's own address")
	APIAddr    = netip.MustParseAddr("198.51.100.10")
	DBAddr     = netip.MustParseAddr("198.51.100.11")
	OtherAddr  = netip.MustParseAddr("198.51.100.12")
	Loopback   = netip.MustParseAddr("127.0.0.1")         // the client namespace's loopback (the "host's loopback")
	DNSAddr    = netip.MustParseAddrPort("127.0.0.53:53") // the test DNS, in the client namespace
)

// Ports the harness listens on at the client side's own addresses
// (loopback and ClientAddr), recording anything that reaches them.
var clientPorts = []uint16{80, 443, 5432, 8080}

// Options choose the costlier parts of the harness.
type Options struct {
	Postgres bool // a real PostgreSQL server on DBName:5432 (initdb: about a second)
}

// Env is one test's network: the supervisor runs in Client (Start; StartDirect for
// an unconfined process resolving with the test DNS),
// the test hosts live in Upstream.
type Env struct {
	Client, Upstream *NS
	DNS              *DNS
	CA               *CA
	WS               *WSEcho
	Postgres         *Postgres // nil unless Options.Postgres
	Dir              string    // readable by every user: ca.pem, resolv.conf
	ResolvConf       string    // a resolv.conf naming DNS, for unconfined clients (Command)
	SetupTook        time.Duration

	t         testing.TB
	listeners map[netip.AddrPort]*Listener
}

// WSEcho is the WebSocket echo every web listener serves at /ws.
type WSEcho = wsEcho

// Echoed is how many messages the echo sent back, over all connections.
func (e *wsEcho) Echoed() int64 { return e.echoed.Load() }

var discardLog = log.New(io.Discard, "", 0)

// Start builds the network for t and tears it down when t ends, whatever
// happens. It skips t unless the process is root, and under -short when
// it asks for PostgreSQL.
func Start(t testing.TB, o Options) *Env {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("testnet: a test network of network namespaces needs root")
	}
	if o.Postgres && testing.Short() {
		t.Skip("-short: the PostgreSQL test host (initdb) is for the full suite")
	}
	began := time.Now()
	e := &Env{t: t, WS: &wsEcho{}, listeners: map[netip.AddrPort]*Listener{}}
	var err error
	if e.Client, err = newNS("client"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Client.Close() })
	if e.Upstream, err = newNS("upstream"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Upstream.Close() })
	if err := e.link(); err != nil {
		t.Fatal(err)
	}

	e.Dir, err = os.MkdirTemp("", "mcpsandbox-testnet-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(e.Dir) })
	if err := os.Chmod(e.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	e.ResolvConf = filepath.Join(e.Dir, "resolv.conf")
	if err := os.WriteFile(e.ResolvConf, []byte(fmt.Sprintf("nameserver %s\noptions timeout:2 attempts:1\n", DNSAddr.Addr())), 0o644); err != nil {
		t.Fatal(err)
	}
	e.CA, err = newCA(e.Dir, []string{APIName, DBName, OtherName, RebindName}, []netip.Addr{APIAddr, DBAddr, OtherAddr, ClientAddr, Loopback})
	if err != nil {
		t.Fatalf("testnet: making the test CA: %v", err)
	}

	e.startDNS()
	tlsCfg := &tls.Config{Certificates: []tls.Certificate{e.CA.Server}}
	e.web(e.Upstream, APIName, APIAddr, tlsCfg, 80, 443, 8080)
	e.web(e.Upstream, OtherName, OtherAddr, tlsCfg, 80, 443, 5432)
	e.web(e.Upstream, DBName, DBAddr, tlsCfg, 5433)
	e.web(e.Client, "client-loopback", Loopback, tlsCfg, clientPorts...)
	e.web(e.Client, "client-own-address", ClientAddr, tlsCfg, clientPorts...)
	if o.Postgres {
		e.Postgres = startPostgres(t, e.Upstream, netip.AddrPortFrom(DBAddr, 5432))
	}
	e.SetupTook = time.Since(began)
	return e
}

// link joins the namespaces by a veth pair and brings up loopback in each.
func (e *Env) link() error {
	cl, err := netlink.NewHandleAt(e.Client.handle)
	if err != nil {
		return fmt.Errorf("testnet: netlink in %s: %w", e.Client.Name, err)
	}
	defer cl.Close()
	up, err := netlink.NewHandleAt(e.Upstream.handle)
	if err != nil {
		return fmt.Errorf("testnet: netlink in %s: %w", e.Upstream.Name, err)
	}
	defer up.Close()
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "to-upstream"}, PeerName: "to-client", PeerNamespace: netlink.NsFd(e.Upstream.handle)}
	if err := cl.LinkAdd(veth); err != nil {
		return fmt.Errorf("testnet: veth: %w", err)
	}
	side := func(h *netlink.Handle, dev string, addrs ...netip.Addr) error {
		lo, err := h.LinkByName("lo")
		if err == nil {
			err = h.LinkSetUp(lo)
		}
		if err != nil {
			return fmt.Errorf("testnet: lo up: %w", err)
		}
		l, err := h.LinkByName(dev)
		if err != nil {
			return err
		}
		for _, a := range addrs {
			pfx, _ := netlink.ParseIPNet(a.String() + "/24")
			if err := h.AddrAdd(l, &netlink.Addr{IPNet: pfx}); err != nil {
				return fmt.Errorf("testnet: address %s on %s: %w", a, dev, err)
			}
		}
		return h.LinkSetUp(l)
	}
	if err := side(cl, "to-upstream", ClientAddr); err != nil {
		return err
	}
	return side(up, "to-client", APIAddr, DBAddr, OtherAddr)
}

func (e *Env) startDNS() {
	udp, err := e.Client.ListenPacket(DNSAddr.String())
	if err != nil {
		e.t.Fatalf("testnet: DNS on %s: %v", DNSAddr, err)
	}
	tcp, err := e.Client.Listen(DNSAddr.String())
	if err != nil {
		udp.Close()
		e.t.Fatalf("testnet: DNS on %s/tcp: %v", DNSAddr, err)
	}
	e.DNS = newDNS(DNSAddr, udp, tcp)
	e.t.Cleanup(e.DNS.close)
	e.DNS.Set(APIName, APIAddr)
	e.DNS.Set(DBName, DBAddr)
	e.DNS.Set(OtherName, OtherAddr)
	e.DNS.Rebind(RebindName, APIAddr, Loopback)
}

// web listens on each port of addr in ns: the web service on 443 over TLS
// and in the clear on the others, but for database ports, where it hangs up.
func (e *Env) web(ns *NS, host string, addr netip.Addr, tlsCfg *tls.Config, ports ...uint16) {
	for _, port := range ports {
		ap := netip.AddrPortFrom(addr, port)
		nl, err := ns.Listen(ap.String())
		if err != nil {
			e.t.Fatalf("testnet: listening on %s in %s: %v", ap, ns.Name, err)
		}
		l, err := newListener(host, nl)
		if err != nil {
			e.t.Fatal(err)
		}
		e.listeners[ap] = l
		switch port {
		case 443:
			e.serve(l, "https", tlsCfg)
		case 5432, 5433:
			e.hangUp(l) // a database port: a client that got here fails at once
		default:
			e.serve(l, "http", nil)
		}
	}
}

// Listener is the recording listener at addr:port, or nil.
func (e *Env) Listener(addr netip.Addr, port uint16) *Listener {
	return e.listeners[netip.AddrPortFrom(addr, port)]
}

// Listeners lists every recording listener, by address.
func (e *Env) Listeners() []*Listener {
	var all []*Listener
	for _, l := range e.listeners {
		all = append(all, l)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Addr.Compare(all[j].Addr) < 0 })
	return all
}

// ClientSide lists the listeners on the client namespace's loopback and own
// address: the host's own services, which nothing confined may reach.
func (e *Env) ClientSide() []*Listener {
	var own []*Listener
	for _, l := range e.Listeners() {
		if a := l.Addr.Addr(); a == Loopback || a == ClientAddr {
			own = append(own, l)
		}
	}
	return own
}

// StartDirect starts cmd unconfined in the client namespace, resolving
// names with the test DNS: it runs in a mount namespace of its own where
// /etc/resolv.conf is ResolvConf (util-linux's unshare makes it).
func (e *Env) StartDirect(cmd *exec.Cmd) error {
	unshare := systemProgram("unshare")
	if unshare == "" {
		return errors.New("testnet: unshare (util-linux) is not installed")
	}
	script := `mount --bind "$0" /etc/resolv.conf && exec "$@"`
	cmd.Args = append([]string{unshare, "--mount", "--propagation", "private", "--", "/bin/sh", "-c", script, e.ResolvConf, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = unshare
	return e.Client.Start(cmd)
}

// Start starts cmd in the client namespace (where the supervisor runs).
func (e *Env) Start(cmd *exec.Cmd) error { return e.Client.Start(cmd) }
