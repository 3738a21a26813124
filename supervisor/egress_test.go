package supervisor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miekg/dns"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const roleFetchServer = "mcpsandbox-test-role=fetch-server"

// serveFetch is an MCP server with one tool, get {url}: an HTTP GET with
// Go's net/http and no proxy setting, answering the body or the error.
func serveFetch() {
	s := mcp.NewServer(&mcp.Implementation{Name: "fetch", Version: "1"}, nil)
	type args struct {
		URL string `json:"url"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "get"}, func(ctx context.Context, _ *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
		client := &http.Client{Transport: &http.Transport{Proxy: nil}}
		resp, err := client.Get(a.URL)
		if err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil, nil
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}}, nil, nil
	})
	s.Run(context.Background(), &mcp.StdioTransport{})
}

// testNameServer answers A queries for names (name → IPv4 address) and
// NXDOMAIN for the rest, on 127.0.0.1: the host-side resolver (--resolver).
func testNameServer(t *testing.T, names map[string]string) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	srv := &dns.Server{PacketConn: pc, NotifyStartedFunc: func() { close(started) }, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, req *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(req)
		q := req.Question[0]
		addr, ok := names[strings.TrimSuffix(q.Name, ".")]
		switch {
		case !ok:
			m.SetRcode(req, dns.RcodeNameError)
		case q.Qtype == dns.TypeA:
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: net.ParseIP(addr)})
		}
		w.WriteMsg(m)
	})}
	go srv.ActivateAndServe()
	<-started
	t.Cleanup(func() { srv.Shutdown() })
	return pc.LocalAddr().String()
}

// Under egress a confined server reaches a host the policy names, by name,
// through its own network namespace with no proxy setting; a name the policy
// does not name does not resolve, and another port is refused at connect.
// The audit log ties each connection to the tools/call that made it.
func TestEgressReachesOnlyNamedHostsAndAuditsEachConnection(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s%s", r.Host, r.URL.Path)
	}))
	defer upstream.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a port the policy does not allow was reached: %s", r.URL)
	}))
	defer other.Close()
	_, port, _ := net.SplitHostPort(upstream.Listener.Addr().String())
	_, otherPort, _ := net.SplitHostPort(other.Listener.Addr().String())

	exe, _ := os.Executable()
	pol := testPolicy([]string{exe, roleFetchServer})
	pol.Net = "egress"
	// The test host is on loopback: naming 127.0.0.1 lifts the SSRF floor
	// for that address only.
	pol.AllowHosts = []string{"api.example.test:" + port, "127.0.0.1:" + port}
	pol.Resolver = testNameServer(t, map[string]string{"api.example.test": "127.0.0.1", "other.example.test": "127.0.0.1"})
	pol.AuditLog = filepath.Join(t.TempDir(), "audit.log")
	r := startRelay(t, pol)
	cs := r.sdkClient("", nil)

	if got := mustCallTool(t, cs, "get", map[string]any{"url": "http://api.example.test:" + port + "/x"}); got != "hello from api.example.test:"+port+"/x" {
		t.Fatalf("allowed host: %q", got)
	}
	for _, c := range []struct{ url, want string }{
		{"http://other.example.test:" + port + "/", "no such host"},
		{"http://api.example.test:" + otherPort + "/", "connection refused"},
	} {
		res, err := callTool(t, cs, "get", map[string]any{"url": c.url})
		if err != nil || !res.IsError || !strings.Contains(toolText(t, res), c.want) {
			t.Errorf("%s: %v %v, want a tool error saying %q", c.url, err, res, c.want)
		}
	}
	r.logs.waitFor(t, "--allow-host other.example.test")
	cs.Close()
	r.wait()

	data, err := os.ReadFile(pol.AuditLog)
	if err != nil {
		t.Fatal(err)
	}
	var conns, calls []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if _, ok := m["connection"]; ok {
			conns = append(conns, m)
		} else if m["method"] == "tools/call" {
			calls = append(calls, m)
		}
	}
	if len(conns) != 1 || conns[0]["host"] != "api.example.test" || conns[0]["allowed"] != true ||
		conns[0]["address"] != "127.0.0.1" || conns[0]["bytes_down"].(float64) == 0 || fmt.Sprint(conns[0]["tools"]) != "[get]" {
		t.Errorf("connection lines: %v", conns)
	}
	if len(calls) != 3 {
		t.Fatalf("%d tools/call lines, want 3: %v", len(calls), calls)
	}
	if listed := fmt.Sprint(calls[0]["connections"]); !strings.Contains(listed, "api.example.test") {
		t.Errorf("the first call's line lists %s, want its connection", listed)
	}
}
