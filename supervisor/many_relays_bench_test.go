package supervisor_test

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// BenchmarkRelays50: what one relay costs a process holding many, as a
// daemon would. Each round starts fifty relays at once, each with its own
// confined example server, brings each through initialize and one call
// from a raw host that keeps no goroutine or buffer of its own, and
// measures this process with the fifty idle against the baseline before
// them; then all hosts leave. Reported per relay: RSS, and the Go heap and
// goroutine stacks in use (KiB), and goroutines; and the wall time for all
// fifty to come up. The servers'
// own memory is theirs, in their cgroups, not counted here.
//
//	go test ./supervisor -run '^$' -bench Relays50 -benchtime 3x
func BenchmarkRelays50(b *testing.B) {
	const n = 50
	requireConfinement(b)
	fleetOuterLimit(b, n)
	pol := fleetPolicy(b)
	base := warmFleet(b, pol)
	var rounds int
	var rssKiB, heapKiB, stackKiB, goroutines, startMs float64
	for b.Loop() {
		rounds++
		begin := time.Now()
		rs := startFleet(b, n, pol)
		if reportErrors(b, rs, "start", eachRelay(rs, (*fleetRelay).rawSession)) {
			b.FailNow()
		}
		startMs += float64(time.Since(begin).Microseconds()) / 1000
		idle := measureFootprint(b)
		rssKiB += float64(idle.rssKiB-base.rssKiB) / n
		heapKiB += float64(idle.heapKiB-base.heapKiB) / n
		stackKiB += float64(idle.stackKiB-base.stackKiB) / n
		goroutines += float64(idle.goroutines-base.goroutines) / n
		shutdownErrs := eachRelay(rs, func(r *fleetRelay) error {
			_, err := r.shutdown()
			return err
		})
		if reportErrors(b, rs, "shutdown", shutdownErrs) {
			b.FailNow()
		}
		if left, _ := awaitGoroutinesBack(base, 3); left != nil {
			b.Fatalf("%d relay goroutines still run after every supervisor.Run returned:\n%s", len(left), strings.Join(left, "\n\n"))
		}
	}
	b.ReportMetric(rssKiB/float64(rounds), "RSS-KiB/relay")
	b.ReportMetric(heapKiB/float64(rounds), "heap-KiB/relay")
	b.ReportMetric(stackKiB/float64(rounds), "stack-KiB/relay")
	b.ReportMetric(goroutines/float64(rounds), "goroutines/relay")
	b.ReportMetric(startMs/float64(rounds), "ms-to-50-up")
}

// rawSession initializes the session and makes one call with JSON-RPC
// lines, reading on this goroutine: afterwards the host holds nothing.
func (r *fleetRelay) rawSession() error {
	if err := r.hostR.SetReadDeadline(time.Now().Add(fleetWait)); err != nil {
		return err
	}
	in := bufio.NewReader(r.hostR)
	send := func(line string) error {
		_, err := io.WriteString(r.hostW, line+"\n")
		return err
	}
	await := func(id string) (string, error) {
		for {
			line, err := in.ReadBytes('\n')
			if err != nil {
				return "", fmt.Errorf("waiting for the response to %s: %w", id, err)
			}
			for _, m := range jsonRPCMessages(line) {
				if string(m["id"]) == id && m["method"] == nil {
					if m["result"] == nil {
						return "", fmt.Errorf("response to %s: %s", id, line)
					}
					return string(m["result"]), nil
				}
			}
		}
	}
	if err := send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`); err != nil {
		return err
	}
	if _, err := await(`0`); err != nil {
		return err
	}
	if err := send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		return err
	}
	if err := send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q}}}`, r.name)); err != nil {
		return err
	}
	res, err := await(`1`)
	if err != nil {
		return err
	}
	if !strings.Contains(res, fmt.Sprintf("%q", r.name)) {
		return fmt.Errorf("echo of %q answered %s", r.name, res)
	}
	return nil
}
