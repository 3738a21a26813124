package supervisor_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

const (
	roleLookupServer  = "mcpsandbox-test-role=lookup-server"
	roleFetchesOnCall = "mcpsandbox-test-role=fetches-on-call"
)

// serveLookups is a server that needs the network at start, as
// @stripe/mcp does: it looks up each name of its arguments with Go's
// resolver, then never answers anything (it reads stdin to its end).
func serveLookups(names []string) {
	for _, name := range names {
		addrs, err := net.LookupHost(name)
		fmt.Fprintln(os.Stderr, "lookup", name, addrs, err)
	}
	io.Copy(io.Discard, os.Stdin)
}

// serveFetchesOnCall answers every request, initialize aside, as a server
// whose every method fetches from its API (@supabase/mcp-server-supabase's
// tools/list): it looks the API's host up, then answers its own error.
func serveFetchesOnCall(host string) {
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage
			Method string
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || req.ID == nil {
			continue
		}
		if req.Method == "initialize" {
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"f","version":"1"}}}`+"\n", req.ID)
			continue
		}
		_, err := net.LookupHost(host)
		fmt.Fprintln(os.Stderr, "fetch:", err)
		fmt.Printf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"fetch failed"}}`+"\n", req.ID)
	}
}

// nodeLookupServer is the same in Node, whose dns.lookup is glibc's
// getaddrinfo (what fetch uses): a server that never answers.
func nodeLookupServer(name string) []string {
	return []string{"node", "-e", `require("dns").lookup(process.argv[1], (e, a) => { console.error("lookup", e ? e.code : a); process.stdin.resume(); })`, name}
}

// connectFails connects the official Go SDK client (protocol version,
// "" for the stateless 2026-07-28 one, whose first request is
// server/discover) and returns mcpsandbox's error for it.
func connectFails(t *testing.T, r *relay, version string) *jsonrpc.Error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	var so *mcp.ClientSessionOptions
	if version != "" {
		so = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1.0"}, nil)
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: r.fromRly, Writer: r.toRelay}, so)
	if err == nil {
		cs.Close()
		t.Fatal("connected to a server that never answers")
	}
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) {
		t.Fatalf("connect: %v, want mcpsandbox's JSON-RPC error (not a hang, not the client's own timeout)", err)
	}
	return rpcErr
}

// Under the default policy (no network) a server that looks up a host at
// start and then never answers: the host gets mcpsandbox's -31112 within
// --start-timeout naming the host and the --allow-host that allows it, and
// status names it too. Go's resolver and glibc's (Node) alike.
func TestNoNetworkServerThatNeverAnswersNamesTheHost(t *testing.T) {
	exe, _ := os.Executable()
	for _, c := range []struct {
		name, version string
		cmd           []string
	}{
		{"go-initialize", "2025-11-25", []string{exe, roleLookupServer, "mcp.stripe.com"}},
		{"node-discover", "", nodeLookupServer("mcp.stripe.com")},
	} {
		t.Run(c.name, func(t *testing.T) {
			pol := testPolicy(c.cmd)
			pol.StartTimeout = time.Second
			s, r := startSession(t, pol)
			// The lookup is made before the host connects: the error names
			// what was denied by then.
			r.logs.waitFor(t, "name=mcp.stripe.com")
			e := connectFails(t, r, c.version)
			if c.version == "" {
				// The SDK tries initialize after the failed discover: each
				// got its answer.
				r.logs.waitFor(t, "did not answer the host's server/discover in time")
			}
			if e.Code != supervisor.CodeStartTimeout || !strings.Contains(e.Message, "did not answer initialize within mcpsandbox's StartTimeout 1s") ||
				!strings.Contains(e.Message, "tried to reach mcp.stripe.com") || !strings.Contains(e.Message, "allow it with --allow-host mcp.stripe.com") {
				t.Errorf("error %d %q, want %d naming the host and --allow-host mcp.stripe.com", e.Code, e.Message, supervisor.CodeStartTimeout)
			}
			st := s.Status()
			if len(st.Denied.Hosts) != 1 || st.Denied.Hosts[0].Host != "mcp.stripe.com" || st.Denied.Hosts[0].Fix != "--allow-host mcp.stripe.com" {
				t.Errorf("status: denied %+v, want mcp.stripe.com and its --allow-host", st.Denied)
			}
		})
	}
}

// Under egress with the host allowed, it is not reported; a host the
// policy does not allow still is, and the error for a server that never
// answers says only that when nothing was denied.
func TestEgressAllowedHostIsNotReported(t *testing.T) {
	exe, _ := os.Executable()
	pol := testPolicy([]string{exe, roleLookupServer, "mcp.stripe.com", "denied.example.test"})
	pol.Net = policy.NetEgress
	pol.AllowHosts = []string{"mcp.stripe.com"}
	pol.Resolver = testNameServer(t, nil)
	pol.StartTimeout = time.Second
	s, r := startSession(t, pol)
	r.logs.waitFor(t, "name=denied.example.test")
	e := connectFails(t, r, "2025-11-25")
	if e.Code != supervisor.CodeStartTimeout || strings.Contains(e.Message, "mcp.stripe.com") || !strings.Contains(e.Message, "--allow-host denied.example.test") {
		t.Errorf("error %d %q, want %d naming denied.example.test alone", e.Code, e.Message, supervisor.CodeStartTimeout)
	}
	if d := s.Status().Denied; len(d.Hosts) != 1 || d.Hosts[0].Host != "denied.example.test" {
		t.Errorf("status: denied %+v, want denied.example.test alone", d)
	}
}

// A server that denied nothing and never answers: the error says so, and
// the host, still connected, has its server still running, the same
// process: the answer ends the wait, not the server. A host that asks
// again is answered in time again.
func TestServerThatNeverAnswersGetsAnAnswerInTime(t *testing.T) {
	exe, _ := os.Executable()
	pol := testPolicy([]string{exe, roleLookupServer})
	pol.StartTimeout = time.Second
	s, r := startSession(t, pol)
	h := r.rawHost()
	params := `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`
	m := h.call("1", "initialize", params)
	var e struct {
		Code    int
		Message string
		Data    struct{ Kind, Limit string }
	}
	if err := json.Unmarshal(m["error"], &e); err != nil || e.Code != supervisor.CodeStartTimeout || e.Data.Kind != "start-timeout" || e.Data.Limit != "1s" ||
		e.Message != "MCP server did not answer initialize within mcpsandbox's StartTimeout 1s" {
		t.Errorf("answer %s, want %d saying it did not answer in time", m["error"], supervisor.CodeStartTimeout)
	}
	st := s.Status()
	if st.State != "running" || st.Generation != 1 || st.Pid == 0 || len(st.Denied.Hosts) != 0 {
		t.Errorf("status %+v: want the same server running, nothing denied", st)
	}
	if m := h.call("2", "initialize", params); errorCode(m) != supervisor.CodeStartTimeout {
		t.Errorf("the second initialize: %s", m["error"])
	}
	r.end()
	h.checkOneAnswerEach()
}

// A tool that fails with its own words after a lookup the policy denied
// ("no such host", "fetch failed") tells the model the cause: a text item
// names the host and the --allow-host; a later failure with no denied
// lookup of its own gets none.
func TestToolErrorAfterDeniedLookupNamesTheHost(t *testing.T) {
	exe, _ := os.Executable()
	r := startRelay(t, testPolicy([]string{exe, roleFetchServer}))
	cs := r.sdkClient("", nil)
	defer cs.Close()
	res, err := callTool(t, cs, "get", map[string]any{"url": "https://api.example.test/v1"})
	if err != nil || !res.IsError || len(res.Content) != 2 {
		t.Fatalf("get: %v %+v, want a tool error of two items", err, res)
	}
	own, note := res.Content[0].(*mcp.TextContent).Text, res.Content[1].(*mcp.TextContent).Text
	if !strings.Contains(own, "no such host") {
		t.Errorf("the server's own error %q, want its resolver's", own)
	}
	if want := "mcpsandbox: during this call the server tried to reach api.example.test, which its policy does not allow (network mode none); allow it with --allow-host api.example.test"; note != want {
		t.Errorf("note %q, want %q", note, want)
	}
	res, err = callTool(t, cs, "get", map[string]any{"url": "http://192.0.2.1/"})
	if err != nil || !res.IsError || len(res.Content) != 1 {
		t.Errorf("get by address: %v %+v, want the server's tool error alone", err, res)
	}
}

// A prestarted server that fails before it is ready names the hosts it was
// denied: the daemon shows the error as the prestarts' backoff reason.
func TestPrestartFailureNamesDeniedHosts(t *testing.T) {
	requireConfinement(t)
	pol := testPolicy([]string{"node", "-e", `require("dns").lookup("mcp.stripe.com", () => process.exit(3))`})
	pol.Restart = policy.RestartNever
	_, err := supervisor.Prestart(context.Background(), supervisor.Options{Name: "test", Policy: pol, LookupEnv: os.LookupEnv})
	if err == nil || !strings.Contains(err.Error(), "exited with status 3 before it answered: the server tried to reach mcp.stripe.com") {
		t.Errorf("prestart: %v, want its failure naming mcp.stripe.com", err)
	}
}

// A server that answers tools/list with its own "fetch failed" after a
// denied lookup: its error reaches the host as it wrote it, and the log
// names the host and the --allow-host.
func TestServerErrorAfterDeniedLookupIsExplainedInTheLog(t *testing.T) {
	exe, _ := os.Executable()
	r := startRelay(t, testPolicy([]string{exe, roleFetchesOnCall, "api.supabase.com"}))
	h := r.rawHost()
	h.initialize("2025-11-25")
	m := h.call("2", "tools/list", "{}")
	if string(m["error"]) != `{"code":-32603,"message":"fetch failed"}` {
		t.Errorf("tools/list: %s, want the server's own error as it wrote it", m["error"])
	}
	r.logs.waitFor(t, "the server answered tools/list with an error after it was denied hosts; the server tried to reach api.supabase.com, which its policy does not allow (network mode none); allow it with --allow-host api.supabase.com")
}
