package bench

import (
	"context"
	"encoding/json"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The egress benchmarks: the same client (bench/netclient) reaches the same
// upstream on loopback direct (unconfined, to 127.0.0.1), confined with
// host networking (to 127.0.0.1: what confinement alone costs) and confined
// in network mode egress (by name, through the DNS stub, the capture
// listeners and the supervisor's proxy), the three taking turns in one run.

const (
	upstreamName = "upstream.example.test"
	forwardName  = "forward.example.test" // forwarder's, the floor for any proxy
)

// netChain is netclient reached one way, with the address it dials and
// the DNS server it resolves that with ("" = its resolv.conf's).
type netChain struct {
	name, addr, resolver string
	s                    *session
}

func netChains(b *testing.B) []netChain {
	up := upstream(b)
	_, port, _ := net.SplitHostPort(up)
	_, fwdPort, _ := net.SplitHostPort(forwarder(b, up))
	resolver := nameServer(b, map[string]string{upstreamName: "127.0.0.1", forwardName: "127.0.0.1"})
	run := []string{bins.mcpsandbox, "run", "--log-level", "warn"}
	egress := append(run,
		// The upstream is on loopback: naming 127.0.0.1 lifts the SSRF
		// floor for that address.
		"--allow-host", net.JoinHostPort(upstreamName, port), "--allow-host", up,
		"--resolver", resolver, "--", bins.netclient)
	// Each by name: direct and with host networking resolved by the same
	// DNS server the supervisor's proxy asks, under egress by the stub.
	byName := net.JoinHostPort(upstreamName, port)
	return []netChain{
		{"direct", byName, resolver, startSession(b, []string{bins.netclient})},
		{"forward", net.JoinHostPort(forwardName, fwdPort), resolver, startSession(b, []string{bins.netclient})},
		{"nethost", byName, resolver, startSession(b, append(run, "--net", "host", "--", bins.netclient))},
		{"egress", byName, "", startSession(b, egress)},
	}
}

// tool calls one of netclient's tools and decodes its structured result.
func (c netChain) tool(b *testing.B, name string, args map[string]any, out any) {
	b.Helper()
	res, err := c.s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		b.Fatalf("%s %s: %v", c.name, name, err)
	}
	if res.IsError {
		var text []string
		for _, ct := range res.Content {
			if t, ok := ct.(*mcp.TextContent); ok {
				text = append(text, t.Text)
			}
		}
		b.Fatalf("%s %s: tool error: %s", c.name, name, strings.Join(text, "; "))
	}
	data, err := json.Marshal(res.StructuredContent)
	if err == nil {
		err = json.Unmarshal(data, out)
	}
	if err != nil {
		b.Fatalf("%s %s: result %v: %v", c.name, name, res.StructuredContent, err)
	}
}

type connectTimes struct {
	Resolve []int64 `json:"resolve"`
	Connect []int64 `json:"connect"`
}

func (c netChain) connect(b *testing.B, n int) connectTimes {
	var t connectTimes
	c.tool(b, "connect", map[string]any{"addr": c.addr, "count": n, "resolver": c.resolver}, &t)
	if len(t.Connect) != n || len(t.Resolve) != n {
		b.Fatalf("%s: %d connect times for %d connections", c.name, len(t.Connect), n)
	}
	return t
}

// connectBatch is how many connects one tool call makes: the chains take
// turns every batch.
const connectBatch = 25

// BenchmarkEgressConnect: a connection by name, from resolving it to the
// first byte echoed back (NAME-resolve-ms/connect is the resolving part).
// Target: egress adds ≤ 1 ms per connection to direct (added-ms/connect).
func BenchmarkEgressConnect(b *testing.B) {
	chains := netChains(b)
	for _, c := range chains {
		c.connect(b, connectBatch) // warm: first connects, page cache
	}
	got := samples{}
	b.ResetTimer()
	for done := 0; done < b.N; done += connectBatch {
		n := min(connectBatch, b.N-done)
		for _, c := range chains {
			t := c.connect(b, n)
			for i := range n {
				got[c.name] = append(got[c.name], time.Duration(t.Resolve[i]+t.Connect[i]))
				got[c.name+"-resolve"] = append(got[c.name+"-resolve"], time.Duration(t.Resolve[i]))
			}
		}
	}
	b.StopTimer()
	for _, c := range chains {
		b.ReportMetric(float64(got.median(c.name))/1e6, c.name+"-ms/connect")
		b.ReportMetric(float64(got.median(c.name+"-resolve"))/1e6, c.name+"-resolve-ms/connect")
	}
	egress, direct := got.median("egress"), got.median("direct")
	b.ReportMetric(float64(egress-direct)/1e6, "added-ms/connect")
	b.ReportMetric(float64(egress)/float64(direct), "x-vs-direct")
	b.ReportMetric(float64(egress)/float64(got.median("forward")), "x-vs-forward")
}

// bulkBytes is what each transfer moves, each way.
const bulkBytes = 256 << 20

// BenchmarkEgressBulk256MiB: 256 MiB from the upstream to the client (down)
// and from the client to the upstream (up), over one connection each,
// timed from the dial to the last byte. Target: egress ≥ 0.9× direct.
func BenchmarkEgressBulk256MiB(b *testing.B) {
	chains := netChains(b)
	got := samples{}
	b.ResetTimer()
	for range b.N {
		for _, c := range chains {
			for _, dir := range []string{"down", "up"} {
				var t struct {
					NS int64 `json:"ns"`
				}
				c.tool(b, "transfer", map[string]any{"addr": c.addr, "resolver": c.resolver, "bytes": bulkBytes, "up": dir == "up"}, &t)
				got[c.name+"-"+dir] = append(got[c.name+"-"+dir], time.Duration(t.NS))
			}
		}
	}
	b.StopTimer()
	mbps := func(name string) float64 { return bulkBytes / 1e6 / got.median(name).Seconds() }
	for _, dir := range []string{"down", "up"} {
		for _, c := range chains {
			b.ReportMetric(mbps(c.name+"-"+dir), c.name+"-MB/s-"+dir)
		}
		b.ReportMetric(mbps("egress-"+dir)/mbps("direct-"+dir), "x-vs-direct-"+dir)
		b.ReportMetric(mbps("egress-"+dir)/mbps("forward-"+dir), "x-vs-forward-"+dir)
	}
}

// heldConns is how many connections one step of the memory benchmark adds.
const heldConns = 100

// BenchmarkEgressMemory100Conns: the supervisor process's resident set
// (VmRSS of `mcpsandbox run`, which runs the proxy) as the confined client
// holds 100 connections open through it, then 100 more, each with a byte
// echoed end to end; per 100 connections the median growth of the steps.
// Each iteration is a fresh supervisor, so that no freed memory of an
// earlier round hides the growth.
func BenchmarkEgressMemory100Conns(b *testing.B) {
	up := upstream(b)
	_, port, _ := net.SplitHostPort(up)
	resolver := nameServer(b, map[string]string{upstreamName: "127.0.0.1"})
	argv := []string{bins.mcpsandbox, "run", "--log-level", "warn",
		"--allow-host", net.JoinHostPort(upstreamName, port), "--allow-host", up,
		"--resolver", resolver, "--", bins.netclient}
	addr := net.JoinHostPort(upstreamName, port)
	var steps []float64 // KiB per heldConns
	var base float64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		c := netChain{"egress", addr, "", startSession(b, argv)}
		c.connect(b, connectBatch) // warm: the proxy's paths taken once
		pid := c.s.cmd.Process.Pid
		before, _ := rssMiB(b, pid)
		base = before
		b.StartTimer()
		for range 2 {
			var held struct {
				Held int `json:"held"`
			}
			c.tool(b, "hold", map[string]any{"addr": addr, "count": heldConns}, &held)
			after, _ := rssMiB(b, pid)
			steps = append(steps, (after-before)*1024)
			before = after
		}
		b.StopTimer()
		c.s.close()
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(steps)
	b.ReportMetric(steps[len(steps)/2], "supervisor-RSS-KiB/100conns")
	b.ReportMetric(base, "supervisor-RSS-MiB-idle")
}
