package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/internal/testnet"
	"github.com/mcpsandbox/mcpsandbox/internal/testnet/netclient"
)

// The egress tests: real clients inside the sandbox, under `run
// --allow-host`, against test hosts of the test's own (internal/testnet).
// They need root for the test network. Each runs twice: with the
// supervisor as root, and as an ordinary user (testenv.UnprivUID) in the
// same client namespace, the user-namespace path, given the cgroups an
// administrator would delegate (testenv.DelegateV1Cgroups).

// supervisors are the two ways the tests start mcpsandbox.
var supervisors = []struct {
	name string
	user bool
}{{"as root", false}, {"as an ordinary user", true}}

// requireEgress skips until the egress pipeline is merged: the tests turn
// on by themselves when run's help names --allow-host.
func requireEgress(t *testing.T) {
	t.Helper()
	out, stderr, _ := runCLI(t, "run", "--help")
	if !strings.Contains(out+stderr, "--allow-host") {
		t.Skip("egress pipeline not on this branch yet (run --help names no --allow-host)")
	}
}

// The policy of the egress session: the web host on its default ports, the
// database on 5432, and the rebinding name on both.
func egressFlags(e *testnet.Env) []string {
	return []string{
		"--allow-host", testnet.APIName,
		"--allow-host", testnet.DBName + ":5432",
		"--allow-host", testnet.RebindName,
		"--allow-host", testnet.RebindName + ":5432",
		"--resolver", e.DNS.Addr.String(),
	}
}

// startEgress starts `mcpsandbox run FLAGS -- mcpnet serve ...` in the
// client namespace, as root or as testenv.UnprivUID, and connects to it.
func startEgress(t *testing.T, e *testnet.Env, kit *netclient.Kit, user bool, flags ...string) *testnet.Session {
	t.Helper()
	argv := append([]string{asCLI, "run", "--ro", kit.Dir, "--ro", e.Dir}, flags...)
	argv = append(append(argv, "--"), testnet.ServerCommand(kit)...)
	if !user {
		return e.Open(t, exec.Command(self(t), argv...), e.Start)
	}
	// The ordinary user's supervisor waits on descriptor 3 until it is in
	// the delegated cgroups, then becomes mcpsandbox.
	delegated := testenv.DelegateV1Cgroups(t, fmt.Sprintf("mcpsandbox-egress-%d-%d", os.Getpid(), egressRuns.Add(1)), testenv.UnprivUID)
	cmd := exec.Command("/bin/sh", append([]string{"-c", `read go <&3 && exec 3<&- && exec "$@"`, "sh", testenv.SelfForOthers(t)}, argv...)...)
	cmd.Dir, cmd.Env = "/", []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "TMPDIR=/tmp"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: testenv.UnprivUID, Gid: testenv.UnprivUID}}
	wait, release, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.ExtraFiles = []*os.File{wait}
	s := e.Open(t, cmd, func(cmd *exec.Cmd) error {
		defer release.Close()
		err := e.Start(cmd)
		wait.Close()
		if err != nil {
			return err
		}
		for _, dir := range delegated {
			if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(fmt.Sprint(cmd.Process.Pid)), 0); err != nil {
				cmd.Process.Kill()
				return fmt.Errorf("moving the supervisor into %s: %w", dir, err)
			}
		}
		_, err = io.WriteString(release, "go\n")
		return err
	})
	// The session is up, so the shell has become mcpsandbox.
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if want := fmt.Sprintf("\nUid:\t%d\t", testenv.UnprivUID); err != nil || !strings.Contains(string(status), want) {
		t.Fatalf("the supervisor does not run as uid %d (%v):\n%s", testenv.UnprivUID, err, status)
	}
	return s
}

var egressRuns atomic.Int64

// sharedFile is a path in a directory the ordinary user may write.
func sharedFile(t *testing.T, name string) string {
	t.Helper()
	dir := testenv.SharedDir(t, "mcpsandbox-egress-")
	if err := os.Chown(dir, testenv.UnprivUID, testenv.UnprivUID); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, name)
}

// clientURL is the URL a client takes to reach host:port: a web page, the
// WebSocket echo, or the database.
func clientURL(client, host string, port uint16, tls bool) string {
	hostPort := host
	if a, err := netip.ParseAddr(host); err == nil && a.Is6() {
		hostPort = "[" + host + "]"
	}
	if port != 0 {
		hostPort = fmt.Sprintf("%s:%d", hostPort, port)
	}
	switch client {
	case netclient.Psql:
		return fmt.Sprintf("postgresql://%s@%s:%d/postgres", testnet.PostgresUser, host, port)
	case netclient.NodeWS:
		if tls {
			return "wss://" + hostPort + "/ws"
		}
		return "ws://" + hostPort + "/ws"
	}
	if tls {
		return "https://" + hostPort + "/"
	}
	return "http://" + hostPort + "/"
}

// counts is every test listener's connection count (and the database's).
type counts map[string]int

func countsOf(e *testnet.Env) counts {
	c := counts{}
	for _, l := range e.Listeners() {
		c[l.String()] = l.Count()
	}
	if e.Postgres != nil {
		c["postgres "+e.Postgres.Addr.String()] = len(e.Postgres.Connections())
	}
	return c
}

// changed lists the listeners whose count moved since before, with by how much.
func (before counts) changed(after counts) map[string]int {
	moved := map[string]int{}
	for k, n := range after {
		if n != before[k] {
			moved[k] = n - before[k]
		}
	}
	return moved
}

// movedOnce is what changed since before, once listener has counted a
// connection or after 10s. Only the database needs the wait: it counts a
// connection when its log line is read, which may come after psql's answer.
func movedOnce(e *testnet.Env, before counts, listener string) map[string]int {
	deadline := time.Now().Add(10 * time.Second)
	for {
		moved := before.changed(countsOf(e))
		if moved[listener] > 0 || time.Now().After(deadline) {
			return moved
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A refused case: what the client is pointed at and why it must fail.
type refusal struct {
	what       string
	host       string
	port       uint16
	tls        bool
	nameDenied bool // the stub answers NXDOMAIN: the client says the name does not exist
}

func refusals(client string) []refusal {
	if client == netclient.Psql {
		return []refusal{
			{"a name the policy does not name", testnet.OtherName, 5432, false, true},
			{"another port of an allowed name", testnet.DBName, 5433, false, false},
			{"an IP literal of a host the policy does not name", testnet.OtherAddr.String(), 5432, false, false},
			{"the host's loopback", testnet.Loopback.String(), 5432, false, false},
			{"the host's own address", testnet.ClientAddr.String(), 5432, false, false},
		}
	}
	return []refusal{
		{"a name the policy does not name", testnet.OtherName, 0, true, true},
		{"another port of an allowed name", testnet.APIName, 8080, false, false},
		{"an IP literal of a host the policy does not name", testnet.OtherAddr.String(), 0, false, false},
		{"the host's loopback", testnet.Loopback.String(), 0, false, false},
		{"the host's loopback over TLS", testnet.Loopback.String(), 0, true, false},
		{"the host's own address", testnet.ClientAddr.String(), 0, false, false},
	}
}

// Every real client inside the sandbox reaches the allowed names (plain
// HTTP, TLS end to end with the test host's own certificate, a long-lived
// WebSocket, PostgreSQL), and nothing else: a name the policy does not name
// fails at once as a name that does not exist, and another port of an
// allowed name, an IP literal, the host's loopback and the host's own
// address all fail with no listener anywhere seeing a connection. A name
// whose resolution turns to loopback is refused on its next connection.
func TestEgressRealClients(t *testing.T) {
	requireEgress(t)
	requireConfinement(t)
	e := testnet.Start(t, testnet.Options{Postgres: true})
	t.Logf("test network set up in %v", e.SetupTook)
	kit := testnet.BuildKit(t, e.CA.Path)
	for _, sup := range supervisors {
		t.Run(sup.name, func(t *testing.T) {
			audit := sharedFile(t, "audit.log")
			s := startEgress(t, e, kit, sup.user, append(egressFlags(e), "--audit-log", audit)...)
			egressTable(t, e, s)
			checkAttributed(t, audit, testnet.APIName)
		})
	}
}

func egressTable(t *testing.T, e *testnet.Env, s *testnet.Session) {
	for _, client := range netclient.Names() {
		t.Run(client, func(t *testing.T) {
			t.Run("allowed name", func(t *testing.T) {
				for _, tls := range []bool{false, true} {
					host, port, listener, want := testnet.APIName, uint16(0), "", ""
					switch {
					case client == netclient.Psql:
						if tls {
							continue
						}
						host, port, listener, want = testnet.DBName, 5432, "postgres "+e.Postgres.Addr.String(), "pg-ok "+testnet.PostgresUser
					case client == netclient.NodeWS:
						want = "echo: ping-3"
					case tls:
						want = testnet.Greeting(testnet.APIName, "https")
					default:
						want = testnet.Greeting(testnet.APIName, "http")
					}
					if listener == "" {
						web := uint16(80)
						if tls {
							web = 443
						}
						listener = e.Listener(testnet.APIAddr, web).String()
					}
					before, echoed := countsOf(e), e.WS.Echoed()
					url := clientURL(client, host, port, tls)
					r := s.Connect(t, client, url)
					if !r.OK() || !strings.Contains(r.Stdout, want) {
						t.Errorf("%s: want exit 0 and %q:\n%s", url, want, r)
						continue
					}
					if moved := movedOnce(e, before, listener); len(moved) != 1 || moved[listener] != 1 {
						t.Errorf("%s: connections seen %v, want one, at %s", url, moved, listener)
					}
					if client == netclient.NodeWS && e.WS.Echoed()-echoed != 3 {
						t.Errorf("%s: %d messages echoed over the connection, want 3", url, e.WS.Echoed()-echoed)
					}
				}
			})
			for _, c := range refusals(client) {
				t.Run(c.what, func(t *testing.T) {
					before := countsOf(e)
					url := clientURL(client, c.host, c.port, c.tls)
					r := s.Connect(t, client, url)
					checkRefused(t, url, r, before.changed(countsOf(e)))
					if c.nameDenied {
						if !netclient.NameNotFound(r) {
							t.Errorf("%s: want the name not to exist for the client:\n%s", url, r)
						}
						if fix := "--allow-host " + c.host; !s.Stderr.Contains(fix) {
							t.Errorf("the log names no %q for the denied name", fix)
						}
					}
				})
			}
			t.Run("rebinding to loopback", func(t *testing.T) {
				first, port, listener := testnet.APIAddr, uint16(0), e.Listener(testnet.APIAddr, 80).String()
				if client == netclient.Psql {
					first, port, listener = testnet.DBAddr, 5432, "postgres "+e.Postgres.Addr.String()
				}
				url := clientURL(client, testnet.RebindName, port, false)
				e.DNS.Set(testnet.RebindName, first)
				before := countsOf(e)
				if r := s.Connect(t, client, url); !r.OK() {
					t.Fatalf("%s answering %s: want the client to get through:\n%s", testnet.RebindName, first, r)
				}
				if moved := movedOnce(e, before, listener); len(moved) != 1 || moved[listener] != 1 {
					t.Errorf("%s answering %s: connections seen %v, want one, at %s", testnet.RebindName, first, moved, listener)
				}
				e.DNS.Set(testnet.RebindName, testnet.Loopback)
				before = countsOf(e)
				r := s.Connect(t, client, url)
				checkRefused(t, url+" (now resolving to loopback)", r, before.changed(countsOf(e)))
			})
		})
	}
}

// checkRefused fails t unless r failed by itself, soon (not killed, not
// by its own timeout), and no listener saw a connection.
func checkRefused(t *testing.T, url string, r netclient.Result, moved map[string]int) {
	t.Helper()
	if r.OK() || r.Error != "" || r.ElapsedMS >= netclient.Timeout.Milliseconds()/2 {
		t.Errorf("%s: want the client to fail at once on its own:\n%s", url, r)
	}
	if len(moved) != 0 {
		t.Errorf("%s: listeners saw connections %v, want none", url, moved)
	}
}

// checkAttributed fails t unless the audit log has a tools/call of connect
// whose line lists a connection to host, and that connection's own line
// names the tool.
func checkAttributed(t *testing.T, audit, host string) {
	t.Helper()
	data, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	var listed, own bool
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		if m["tool"] == "connect" {
			conns, _ := json.Marshal(m["connections"])
			listed = listed || strings.Contains(string(conns), `"host":"`+host+`"`)
		}
		if _, ok := m["connection"]; ok && m["host"] == host {
			tools, _ := json.Marshal(m["tools"])
			own = own || string(tools) == `["connect"]`
		}
	}
	if listed && own {
		return
	}
	t.Errorf("no connect call's audit line lists a connection to %s:\n%s", host, data)
}

// The clients run inside the sandbox as it is today (no network): every
// program and script the egress tests use is there and starts, and each
// fails where the network begins, at making its socket, not for a missing
// file. Today's baseline for the table above, which needs --allow-host.
func TestEgressClientsStartInsideTheSandbox(t *testing.T) {
	requireConfinement(t)
	e := testnet.Start(t, testnet.Options{})
	kit := testnet.BuildKit(t, e.CA.Path)
	for _, sup := range supervisors {
		t.Run(sup.name, func(t *testing.T) {
			clientsFailAtTheirSocket(t, e, startEgress(t, e, kit, sup.user))
		})
	}
}

func clientsFailAtTheirSocket(t *testing.T, e *testnet.Env, s *testnet.Session) {
	for _, client := range netclient.Names() {
		port := uint16(0)
		if client == netclient.Psql {
			port = 5432
		}
		url := clientURL(client, testnet.APIAddr.String(), port, false)
		r := s.Connect(t, client, url)
		out := strings.ToLower(r.Stdout + r.Stderr)
		refusedSocket := strings.Contains(out, "operation not permitted") || strings.Contains(out, "eperm") ||
			client == netclient.Curl && r.Exit == 7 // curl: "Couldn't connect to server", the errno unsaid
		if r.OK() || r.Error != "" || !refusedSocket {
			t.Errorf("%s: want it to start and fail at its socket:\n%s", client, r)
		}
	}
	if n := (counts{}).changed(countsOf(e)); len(n) != 0 {
		t.Errorf("listeners saw connections %v, want none", n)
	}
}
