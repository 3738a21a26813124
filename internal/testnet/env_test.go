package testnet

import (
	"context"
	"net"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/mcpsandbox/mcpsandbox/internal/testnet/netclient"
)

// lookup asks the test DNS for name's A record from inside the client
// namespace, as the supervisor's resolver would.
func lookup(t *testing.T, e *Env, name string) (rcode int, addrs []netip.Addr) {
	t.Helper()
	var in *dns.Msg
	err := e.Client.Do(func() (err error) {
		m := new(dns.Msg)
		m.SetQuestion(dns.Fqdn(name), dns.TypeA)
		in, err = dns.Exchange(m, e.DNS.Addr.String())
		return err
	})
	if err != nil {
		t.Fatalf("asking the test DNS for %s: %v", name, err)
	}
	for _, rr := range in.Answer {
		if a, ok := rr.(*dns.A); ok {
			addr, _ := netip.AddrFromSlice(a.A)
			addrs = append(addrs, addr.Unmap())
		}
	}
	return in.Rcode, addrs
}

// The test DNS answers the test hosts, NXDOMAIN for any other name, and
// the rebinding name turns to loopback after its first answer.
func TestDNSAnswersTheTestHostsAndRebinds(t *testing.T) {
	e := Start(t, Options{})
	for name, want := range map[string]netip.Addr{APIName: APIAddr, DBName: DBAddr, OtherName: OtherAddr, "API.Example.Test": APIAddr} {
		if rcode, got := lookup(t, e, name); rcode != dns.RcodeSuccess || len(got) != 1 || got[0] != want {
			t.Errorf("%s: rcode %s, %v; want %v", name, dns.RcodeToString[rcode], got, want)
		}
	}
	if rcode, got := lookup(t, e, "missing.example.test"); rcode != dns.RcodeNameError || len(got) != 0 {
		t.Errorf("missing.example.test: rcode %s, %v; want NXDOMAIN", dns.RcodeToString[rcode], got)
	}
	var seen []netip.Addr
	for range 3 {
		_, got := lookup(t, e, RebindName)
		seen = append(seen, got...)
	}
	if want := []netip.Addr{APIAddr, Loopback, Loopback}; len(seen) != 3 || seen[0] != want[0] || seen[1] != want[1] || seen[2] != want[2] {
		t.Errorf("%s answered %v in turn, want %v", RebindName, seen, want)
	}
	if n := e.DNS.Queries(RebindName); n != 3 {
		t.Errorf("Queries(%s) = %d, want 3", RebindName, n)
	}
}

// A direct case: a client, a URL, what its output must hold, and the
// listener that must have seen it.
type directCase struct {
	client, url, want string
	listener          netip.AddrPort
}

func directCases(e *Env) []directCase {
	api := func(port uint16) netip.AddrPort { return netip.AddrPortFrom(APIAddr, port) }
	httpOK, httpsOK := Greeting(APIName, "http"), Greeting(APIName, "https")
	cases := []directCase{
		{netclient.NodeWS, "ws://" + APIName + "/ws", "echo: ping-3", api(80)},
		{netclient.NodeWS, "wss://" + APIName + "/ws", "echo: ping-3", api(443)},
		{netclient.Psql, e.Postgres.URL(DBName), "pg-ok " + PostgresUser, netip.AddrPort{}},
	}
	for _, c := range []string{netclient.NodeFetch, netclient.NodeHTTPS, netclient.PythonURLLib, netclient.GoHTTP, netclient.Curl} {
		cases = append(cases,
			directCase{c, "http://" + APIName + "/", httpOK, api(80)},
			directCase{c, "https://" + APIName + "/", httpsOK, api(443)})
	}
	return cases
}

// Every client, run unconfined in the client namespace with the test DNS,
// reaches the test hosts by name over HTTP, TLS (trusting the run's CA), a
// WebSocket and PostgreSQL, and the host it reached saw the connection;
// an unknown name and a closed port fail each client in its own words.
// This is the baseline the egress tests compare a confined client with.
func TestDirectClientsReachTheTestHosts(t *testing.T) {
	e := Start(t, Options{Postgres: true})
	t.Logf("harness set up in %v", e.SetupTook)
	kit := BuildKit(t, e.CA.Path)
	ctx := context.Background()
	run := func(client, url string) netclient.Result {
		return kit.RunVia(ctx, client, url, e.StartDirect)
	}

	for _, c := range directCases(e) {
		t.Run(c.client+" "+c.url, func(t *testing.T) {
			var before int
			l := e.listeners[c.listener]
			if l != nil {
				before = l.Count()
			}
			echoed, pgBefore := e.WS.Echoed(), len(e.Postgres.Connections())
			r := run(c.client, c.url)
			if !r.OK() || !strings.Contains(r.Stdout, c.want) {
				t.Fatalf("want exit 0 and %q:\n%s", c.want, r)
			}
			switch {
			case l != nil && l.Count() <= before:
				t.Errorf("%s saw no connection from %s", l, c.client)
			case c.client == netclient.NodeWS && e.WS.Echoed()-echoed != 3:
				t.Errorf("the echo sent %d messages back, want 3", e.WS.Echoed()-echoed)
			case c.client == netclient.Psql:
				// The server logs the connection before it authenticates,
				// so by psql's answer the line has been written.
				waitFor(t, func() bool { return len(e.Postgres.Connections()) > pgBefore }, "postgres to log psql's connection")
				if from := e.Postgres.Connections()[pgBefore].Addr(); from != ClientAddr {
					t.Errorf("postgres saw psql from %s, want %s", from, ClientAddr)
				}
			}
		})
	}

	for _, client := range netclient.Names() {
		t.Run(client+" unknown name", func(t *testing.T) {
			url := "http://missing.example.test/"
			if client == netclient.Psql {
				url = e.Postgres.URL("missing.example.test")
			}
			if r := run(client, url); !netclient.NameNotFound(r) {
				t.Errorf("want a name-not-found failure:\n%s", r)
			}
		})
		t.Run(client+" closed port", func(t *testing.T) {
			url := "http://" + APIName + ":9/"
			switch client {
			case netclient.Psql:
				url = e.Postgres.URL(APIName)
			case netclient.NodeWS:
				url = "ws://" + APIName + ":9/ws"
			}
			if r := run(client, url); r.OK() || netclient.NameNotFound(r) || r.Error != "" {
				t.Errorf("want the client to fail on its own, not for the name:\n%s", r)
			}
		})
	}
}

// waitFor polls cond, for what has no event to wait on (another process's
// log line), failing after 10s.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// A listener counts a connection the moment its handshake is done, before
// it is accepted, and again no more once it is accepted.
func TestListenerCountsConnectionsBeforeAccepting(t *testing.T) {
	e := Start(t, Options{})
	if got := len(e.ClientSide()); got != 2*len(clientPorts) {
		t.Fatalf("%d client side listeners, want loopback and %s on each of %v", got, ClientAddr, clientPorts)
	}
	nl, err := e.Upstream.Listen(netip.AddrPortFrom(OtherAddr, 7).String())
	if err != nil {
		t.Fatal(err)
	}
	l, err := newListener("idle", nl)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if n := l.Count(); n != 0 {
		t.Fatalf("count %d before any connection", n)
	}
	var c net.Conn
	if err := e.Client.Do(func() (err error) {
		c, err = net.Dial("tcp", l.Addr.String())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The kernel queues the connection once the client's last ACK arrives,
	// which the client does not wait for: wait for the count itself.
	waitFor(t, func() bool { return l.Count() == 1 }, "the queued connection to be counted")
	a, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	if n, seen := l.Count(), l.Connections(); n != 1 || len(seen) != 1 || seen[0].From.Addr() != ClientAddr {
		t.Errorf("after accepting: count %d, connections %v; want 1 from %s", n, seen, ClientAddr)
	}
}

// The MCP test server, unconfined in the client namespace, runs the client
// a tools/call names and reports its output and status: the shape the
// egress tests drive through mcpsandbox run.
func TestMCPServerRunsTheClientACallNames(t *testing.T) {
	e := Start(t, Options{})
	kit := BuildKit(t, e.CA.Path)
	argv := ServerCommand(kit)
	s := e.Open(t, exec.Command(argv[0], argv[1:]...), e.StartDirect)

	for _, client := range []string{netclient.NodeFetch, netclient.Curl} {
		before := e.Listener(APIAddr, 443).Count()
		r := s.Connect(t, client, "https://"+APIName+"/")
		if !r.OK() || !strings.Contains(r.Stdout, Greeting(APIName, "https")) || r.Client != client {
			t.Errorf("want %s to reach %s over https:\n%s", client, APIName, r)
		}
		if e.Listener(APIAddr, 443).Count() != before+1 {
			t.Errorf("%s:443 counted %d connections, want %d", APIName, e.Listener(APIAddr, 443).Count(), before+1)
		}
	}
	if r := s.Connect(t, netclient.GoHTTP, "http://"+APIName+":8080/"); !r.OK() || !strings.Contains(r.Stdout, Greeting(APIName, "http")) {
		t.Errorf("want go-http to reach %s:8080:\n%s", APIName, r)
	}
	if r := s.Connect(t, "telnet", "http://"+APIName+"/"); r.OK() || !strings.Contains(r.Error, "no client \"telnet\"") {
		t.Errorf("an unknown client: want an error naming it and the clients:\n%s", r)
	}
}
