package bench

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The egress benchmarks (issue 16): the same client (bench/netclient)
// reaches the same test host, across the veth of the test network
// (testHost), by name, four ways taking turns in one run: direct
// (unconfined, in the client namespace), through a minimal splicing
// forwarder (the floor for any proxy), confined with host networking
// (what confinement alone costs) and confined in network mode egress
// (resolved by the DNS stub, captured in the server's namespace, dialled
// by the supervisor's proxy).

// netChain is netclient reached one way, with the address it dials and
// the DNS server it resolves that with ("" = its resolv.conf's).
type netChain struct {
	name, addr, resolver string
	s                    *session
}

// chains starts netclient the four ways, each in the client namespace.
func (h *testHost) chains(b *testing.B) []netChain {
	start := func(argv ...string) *session {
		return startSessionVia(b, argv, os.Stderr, h.env.Start)
	}
	run := []string{bins.mcpsandbox, "run", "--log-level", "warn"}
	return []netChain{
		{"direct", h.addr(), h.resolver, start(bins.netclient)},
		{"forward", h.forwarder(b), h.resolver, start(bins.netclient)},
		{"nethost", h.addr(), h.resolver, start(append(run, "--net", "host", "--", bins.netclient)...)},
		{"egress", h.addr(), "", start(h.egressArgv()...)},
	}
}

// egressArgv is `mcpsandbox run` allowing the test host, resolving with
// the test DNS on the host side.
func (h *testHost) egressArgv() []string {
	return []string{bins.mcpsandbox, "run", "--log-level", "warn",
		"--allow-host", h.addr(), "--resolver", h.resolver, "--", bins.netclient}
}

// named picks chains by name.
func named(chains []netChain, names ...string) []netChain {
	var picked []netChain
	for _, c := range chains {
		if slices.Contains(names, c.name) {
			picked = append(picked, c)
		}
	}
	return picked
}

// inTurn is chains starting at round's one, so that no chain always
// goes first after a pause.
func inTurn(chains []netChain, round int) []netChain {
	i := round % len(chains)
	return append(slices.Clone(chains[i:]), chains[:i]...)
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

// connectBatch is how many connects one iteration (one tool call per
// chain) makes: the chains take turns every batch.
const connectBatch = 25

// BenchmarkEgressConnect: a connection by name, from resolving it to the
// first byte echoed back (NAME-resolve-ms/connect is the resolving part),
// connectBatch per chain and iteration. Target: egress adds ≤ 1 ms per
// connection to direct (added-ms/connect).
func BenchmarkEgressConnect(b *testing.B) {
	h := startTestHost(b)
	chains := h.chains(b)
	// resolved: the test DNS answers with TTL 0, so egress resolves the
	// name on the host side for every connection; cached: a TTL of a
	// minute, as real names have, which egress keeps.
	for _, regime := range []struct {
		name string
		ttl  uint32
	}{{"resolved", 0}, {"cached", 60}} {
		b.Run(regime.name, func(b *testing.B) {
			h.env.DNS.SetTTL(regime.ttl)
			defer h.env.DNS.SetTTL(0)
			benchConnects(b, chains)
		})
	}
}

func benchConnects(b *testing.B, chains []netChain) {
	for _, c := range chains {
		c.connect(b, connectBatch) // warm: first connects, page cache, the cache
	}
	got := samples{}
	for round := 0; b.Loop(); round++ {
		for _, c := range inTurn(chains, round) {
			t := c.connect(b, connectBatch)
			for i := range connectBatch {
				got[c.name] = append(got[c.name], time.Duration(t.Resolve[i]+t.Connect[i]))
				got[c.name+"-resolve"] = append(got[c.name+"-resolve"], time.Duration(t.Resolve[i]))
			}
		}
	}
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

// BenchmarkEgressBulk256MiB: 256 MiB from the test host to the client
// (down) and from the client to the test host (up), over one connection
// each, timed from the dial to the last byte; one round of every chain
// both ways per iteration. Target: egress ≥ 0.9× direct (x-vs-direct-*).
//
// Two regimes. veth: the veth unbounded, so a transfer costs only CPU and
// every proxy pays for each byte crossing TCP twice (the forwarder shows
// that floor). 10Gbit and 1Gbit: the veth bounded each way to a link's
// rate, direct and egress only.
func BenchmarkEgressBulk256MiB(b *testing.B) {
	h := startTestHost(b)
	chains := h.chains(b)
	b.Run("veth", func(b *testing.B) { bulk(b, chains) })
	for _, link := range []struct {
		name string
		rate uint64
	}{{"10Gbit", 10e9}, {"1Gbit", 1e9}} {
		b.Run(link.name, func(b *testing.B) {
			shapeLink(b, h.env, link.rate)
			bulk(b, named(chains, "direct", "egress"))
		})
	}
}

func bulk(b *testing.B, chains []netChain) {
	got := samples{}
	for round := 0; b.Loop(); round++ {
		for _, c := range inTurn(chains, round) {
			for _, dir := range []string{"down", "up"} {
				var t struct {
					NS int64 `json:"ns"`
				}
				c.tool(b, "transfer", map[string]any{"addr": c.addr, "resolver": c.resolver, "bytes": bulkBytes, "up": dir == "up"}, &t)
				got[c.name+"-"+dir] = append(got[c.name+"-"+dir], time.Duration(t.NS))
			}
		}
	}
	mbps := func(name string) float64 { return bulkBytes / 1e6 / got.median(name).Seconds() }
	for _, dir := range []string{"down", "up"} {
		for _, c := range chains {
			b.ReportMetric(mbps(c.name+"-"+dir), c.name+"-MB/s-"+dir)
		}
		b.ReportMetric(mbps("egress-"+dir)/mbps("direct-"+dir), "x-vs-direct-"+dir)
		if len(got["forward-"+dir]) > 0 {
			b.ReportMetric(mbps("egress-"+dir)/mbps("forward-"+dir), "x-vs-forward-"+dir)
		}
	}
}

// heldConns is how many connections one step of the memory benchmark adds.
const heldConns = 100

// BenchmarkEgressMemory100Conns: the supervisor process's resident set
// (VmRSS of `mcpsandbox run`, which runs the proxy) as the confined client
// holds 100 connections open through it to the test host, then 100 more,
// each with a byte echoed end to end; per 100 connections the median
// growth of the steps. Each iteration is a fresh supervisor, so that no
// freed memory of an earlier round hides the growth.
func BenchmarkEgressMemory100Conns(b *testing.B) {
	h := startTestHost(b)
	var steps []float64 // KiB per heldConns
	var idle float64
	for b.Loop() {
		c := netChain{"egress", h.addr(), "", startSessionVia(b, h.egressArgv(), os.Stderr, h.env.Start)}
		c.connect(b, connectBatch) // warm: the proxy's paths taken once
		pid := c.s.cmd.Process.Pid
		before, _ := rssMiB(b, pid)
		idle = before
		for range 2 {
			var held struct {
				Held int `json:"held"`
			}
			c.tool(b, "hold", map[string]any{"addr": c.addr, "count": heldConns}, &held)
			after, _ := rssMiB(b, pid)
			steps = append(steps, (after-before)*1024)
			before = after
		}
		c.s.close()
	}
	slices.Sort(steps)
	b.ReportMetric(steps[len(steps)/2], "supervisor-RSS-KiB/100conns")
	b.ReportMetric(idle, "supervisor-RSS-MiB-idle")
}
