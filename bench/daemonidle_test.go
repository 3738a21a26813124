package bench

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// idleWindow is how long the daemon's CPU is measured once all its
// instances are warm: at a 1 s heartbeat, 20 pings per instance.
const idleWindow = 20 * time.Second

// warmLimit bounds the wait for a daemon's warm instances: 200 confined
// starts at once on a shared 2-core machine.
const warmLimit = 5 * time.Minute

// idleDaemon is one daemon of BenchmarkDaemonIdle: n static servers, each
// keeping one warm instance, heartbeats at ping ("": the default, 15 s).
type idleDaemon struct {
	name string
	n    int
	ping string
	cpu  bool // measure its CPU over idleWindow
}

// idleFigures is what one idle daemon measured.
type idleFigures struct {
	rssKiB, peakKiB float64
	serverMemKiB    []float64 // per instance, from status (its cgroup's)
	serverRSSKiB    []float64 // per instance, its processes' VmRSS summed
	cpuPct          float64   // of one core over idleWindow
	serverCPUPct    float64   // the servers' processes over the same window
	rssAfterKiB     float64   // at the window's end
}

// BenchmarkDaemonIdle: `mcpsandbox daemon` (the binary, its own process)
// with N servers of the static example server, each keeping one warm
// instance (prestart 1), under the default confinement and limits, after
// every instance is warm (the daemon logs it; status confirms).
//
// RSS per idle server: the daemon's VmRSS at N = 1, 50 and 200, reported
// as (RSS(N) − RSS(1)) / (N − 1) in KiB per server (goal ≤ 3 MiB), beside
// the empty daemon's; and what the sandboxed servers themselves hold (each
// instance's cgroup, from status), which the daemon does not.
//
// CPU of 200 idle supervised servers: the daemon's utime+stime over a
// fixed 20 s window with heartbeats every 1 s and at the default 15 s, as
// % of one core (goal < 2 %), beside the same daemon with no servers; and
// per heartbeat (the 1 s daemon's CPU beyond the empty one's, per ping).
func BenchmarkDaemonIdle(b *testing.B) {
	daemons := []idleDaemon{
		{"empty", 0, "", true},
		{"n1", 1, "", false},
		{"n50", 50, "", false},
		{"n200", 200, "", true},
		{"n200-ping1s", 200, "1s", true},
	}
	got := map[string][]idleFigures{}
	for b.Loop() {
		for _, d := range daemons {
			got[d.name] = append(got[d.name], measureIdle(b, d))
		}
	}
	med := func(name string, f func(idleFigures) float64) float64 {
		var v []float64
		for _, g := range got[name] {
			v = append(v, f(g))
		}
		return median(v)
	}
	rss := func(name string) float64 { return med(name, func(g idleFigures) float64 { return g.rssKiB }) }
	for _, d := range daemons {
		b.ReportMetric(rss(d.name)/1024, d.name+"-RSS-MiB")
	}
	b.ReportMetric(med("n200", func(g idleFigures) float64 { return g.peakKiB })/1024, "n200-peakRSS-MiB")
	b.ReportMetric(med("n200", func(g idleFigures) float64 { return g.rssAfterKiB })/1024, "n200-RSS-after-window-MiB")
	b.ReportMetric((rss("n50")-rss("n1"))/49, "RSS-KiB/server-n50")
	b.ReportMetric((rss("n200")-rss("n1"))/199, "RSS-KiB/server-n200")
	b.ReportMetric((rss("n1")-rss("empty"))/1024, "first-server-RSS-MiB")
	b.ReportMetric(med("n200", func(g idleFigures) float64 { return median(g.serverMemKiB) })/1024, "server-cgroup-MiB-each")
	b.ReportMetric(med("n200", func(g idleFigures) float64 { return median(g.serverRSSKiB) })/1024, "server-RSS-MiB-each")
	b.ReportMetric(med("n200", func(g idleFigures) float64 { return sum(g.serverMemKiB) })/1024, "n200-servers-cgroup-MiB")
	b.ReportMetric(med("n200", func(g idleFigures) float64 { return sum(g.serverMemKiB) })/rss("n200"), "x-servers-vs-daemon-n200")

	cpu := func(name string) float64 { return med(name, func(g idleFigures) float64 { return g.cpuPct }) }
	for _, name := range []string{"empty", "n200", "n200-ping1s"} {
		b.ReportMetric(cpu(name), name+"-CPU-%core")
	}
	b.ReportMetric(med("n200-ping1s", func(g idleFigures) float64 { return g.serverCPUPct }), "n200-ping1s-servers-CPU-%core")
	if e := cpu("empty"); e > 0 {
		b.ReportMetric(cpu("n200")/e, "x-n200-vs-empty")
		b.ReportMetric(cpu("n200-ping1s")/e, "x-n200-ping1s-vs-empty")
	}
	// One core's % over the window is 10 ms of CPU per second; at 200
	// pings a second each µs per ping is 0.02 %.
	b.ReportMetric((cpu("n200-ping1s")-cpu("empty"))*1e4/200, "daemon-CPU-µs/ping")
}

// measureIdle starts d's daemon, waits for its warm instances and measures.
func measureIdle(b *testing.B, d idleDaemon) idleFigures {
	keys := `"prestart": 1`
	if d.ping != "" {
		keys += fmt.Sprintf(`, "policy": {"health": {"ping-interval": %q}}`, d.ping)
	}
	p := startDaemonProc(b, serversConfig("s", d.n, []string{bins.staticserver}, keys))
	defer p.stop()
	warm := map[string]int{}
	for i := 1; i <= d.n; i++ {
		warm[fmt.Sprintf("s%d", i)] = 1
	}
	st := p.waitWarm(b, warm, warmLimit)
	pid := p.cmd.Process.Pid
	f := idleFigures{rssKiB: procStatusKiB(b, pid, "VmRSS"), peakKiB: procStatusKiB(b, pid, "VmHWM")}
	var servers, procs []int // instances' pids; their processes'
	for _, s := range st.Servers {
		for _, i := range s.Instances {
			f.serverMemKiB = append(f.serverMemKiB, float64(i.Memory)/1024)
			servers = append(servers, i.Pid)
			rss := 0.0
			for _, p := range tree(i.Pid) {
				rss += procStatusKiB(b, p, "VmRSS")
				procs = append(procs, p)
			}
			f.serverRSSKiB = append(f.serverRSSKiB, rss)
		}
	}
	if !d.cpu {
		return f
	}
	// The window is the measurement itself, not a wait for anything.
	serverCPU := func() (t time.Duration) {
		for _, pid := range procs {
			t += cpuTime(b, pid)
		}
		return t
	}
	cpu0, srv0, t0 := cpuTime(b, pid), serverCPU(), time.Now()
	time.Sleep(idleWindow)
	cpu1, srv1, elapsed := cpuTime(b, pid), serverCPU(), time.Since(t0)
	f.cpuPct = 100 * float64(cpu1-cpu0) / float64(elapsed)
	f.serverCPUPct = 100 * float64(srv1-srv0) / float64(elapsed)
	f.rssAfterKiB = procStatusKiB(b, pid, "VmRSS")
	// Every instance still the one that was warm: none restarted meanwhile.
	for _, s := range p.status(b).Servers {
		for _, i := range s.Instances {
			if i.State != "warm" || i.Restarts != 0 || !slices.Contains(servers, i.Pid) {
				b.Fatalf("after the window %s is %s (pid %d, %d restarts): not the idle warm instance it was", i.ID, i.State, i.Pid, i.Restarts)
			}
		}
	}
	return f
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

func sum(v []float64) (s float64) {
	for _, x := range v {
		s += x
	}
	return s
}
