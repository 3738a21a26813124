package egress

import (
	"io"
	"net"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The benchmarks measure a connection through the proxy against the same
// connection made directly to the same loopback server, interleaved in one
// run so that the machine's noise falls on both alike. The name's
// resolution is cached (TTL 60 s), as it is for every connection to a
// name but the first within its TTL.
//
//	go test ./egress -run '^$' -bench . -benchtime 20x

// benchRig is a proxy in front of server, reached at proxied; direct is
// the server itself.
func benchRig(b *testing.B, serve func(net.Conn), ttl uint32) (direct, proxied string) {
	u := startUpstream(b, serve)
	r := newRig(b, rigOptions{
		allow:  []string{u.at("api.example.test"), u.at("127.0.0.1")},
		listen: []string{synth(1).String()},
		ttl:    ttl,
	})
	r.dns.set("api.example.test", "127.0.0.1")
	r.lookup("api.example.test")
	r.p.onOpen, r.p.onClose = nil, nil // nothing reads the events
	return u.at("127.0.0.1"), netip.AddrPortFrom(synth(1), u.port).String()
}

func median(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}

// dialByteBack connects to an echo server at to and has one byte carried
// there and back.
func dialByteBack(b *testing.B, to string) net.Conn {
	b.Helper()
	c, err := net.Dial("tcp", to)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.Write([]byte{1}); err != nil {
		b.Fatal(err)
	}
	if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkConnect: connect, one byte there and back, close. The proxy's
// connect itself is answered by the kernel at once; what it adds shows in
// the first byte, which waits for the proxy's decision and its own
// connect upstream. "resolved" asks the host-side resolver (here a Go DNS
// server on loopback) for every connection, as a TTL of 0 makes it.
func BenchmarkConnect(b *testing.B) {
	b.Run("cached", func(b *testing.B) { benchConnect(b, 60) })
	b.Run("resolved", func(b *testing.B) { benchConnect(b, 0) })
}

func benchConnect(b *testing.B, ttl uint32) {
	direct, proxied := benchRig(b, echo, ttl)
	once := func(to string) time.Duration {
		start := time.Now()
		c := dialByteBack(b, to)
		d := time.Since(start)
		c.Close()
		return d
	}
	once(direct)
	once(proxied)
	var ds, ps []time.Duration
	for b.Loop() {
		ds = append(ds, once(direct))
		ps = append(ps, once(proxied))
	}
	md, mp := median(ds), median(ps)
	b.ReportMetric(float64(md.Nanoseconds())/1e3, "direct-µs")
	b.ReportMetric(float64(mp.Nanoseconds())/1e3, "proxy-µs")
	b.ReportMetric(float64((mp-md).Nanoseconds())/1e3, "added-µs")
	b.ReportMetric(float64(mp)/float64(md), "x-vs-direct")
}

// BenchmarkBulk256MiB: the server sends 256 MiB and closes; the client
// reads it all.
func BenchmarkBulk256MiB(b *testing.B) {
	const total = 256 << 20
	chunk := make([]byte, 1<<20)
	direct, proxied := benchRig(b, func(c net.Conn) {
		for range total / len(chunk) {
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	}, 60)
	buf := make([]byte, 1<<20)
	once := func(to string) time.Duration {
		start := time.Now()
		c, err := net.Dial("tcp", to)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		var n int64
		for {
			k, err := c.Read(buf)
			n += int64(k)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		if n != total {
			b.Fatalf("read %d bytes, want %d", n, total)
		}
		return time.Since(start)
	}
	var ds, ps, dcpu, pcpu []time.Duration
	for b.Loop() {
		c0 := cpuTime()
		ds = append(ds, once(direct))
		c1 := cpuTime()
		ps = append(ps, once(proxied))
		dcpu, pcpu = append(dcpu, c1-c0), append(pcpu, cpuTime()-c1)
	}
	md, mp := median(ds), median(ps)
	mib := func(d time.Duration) float64 { return float64(total>>20) / d.Seconds() }
	b.ReportMetric(mib(md), "direct-MiB/s")
	b.ReportMetric(mib(mp), "proxy-MiB/s")
	b.ReportMetric(mib(mp)/mib(md), "throughput-x-vs-direct")
	// CPU (this process: client, server and proxy, user and kernel) tells
	// what a busy machine's wall clock hides: the proxy's second TCP
	// connection is a second loopback transfer.
	b.ReportMetric(float64(median(dcpu).Milliseconds()), "direct-cpu-ms")
	b.ReportMetric(float64(median(pcpu).Milliseconds()), "proxy-cpu-ms")
	b.SetBytes(total)
}

// cpuTime is the CPU this process has used, user and kernel.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// footprint is this process's memory and descriptors.
type footprint struct {
	rssKiB, goKiB, fds, goroutines float64
}

func measure(b *testing.B) footprint {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var f footprint
	f.goKiB = float64(ms.HeapInuse+ms.StackInuse) / 1024
	f.goroutines = float64(runtime.NumGoroutine())
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f.rssKiB, _ = strconv.ParseFloat(strings.Fields(v)[0], 64)
		}
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		b.Fatal(err)
	}
	f.fds = float64(len(fds))
	return f
}

// settle waits for the goroutines of closed connections to end.
func settle(b *testing.B, base footprint) footprint {
	deadline := time.Now().Add(10 * time.Second)
	for {
		f := measure(b)
		if f.goroutines <= base.goroutines {
			return f
		}
		if time.Now().After(deadline) {
			b.Fatalf("%v goroutines still run, %v before", f.goroutines, base.goroutines)
		}
		time.Sleep(time.Millisecond)
	}
}

// BenchmarkOpen100: the proxy's extra memory for 100 open, idle
// connections (each has carried a byte both ways): this process holding
// 100 proxied connections less the same holding 100 direct ones to the
// same server. Go's heap and stacks, RSS, descriptors and goroutines.
func BenchmarkOpen100(b *testing.B) {
	const n = 100
	direct, proxied := benchRig(b, echo, 60)
	hold := func(to string) (footprint, func()) {
		var cs []net.Conn
		for range n {
			cs = append(cs, dialByteBack(b, to))
		}
		f := measure(b)
		return f, func() {
			for _, c := range cs {
				c.Close()
			}
		}
	}
	var goKiB, rssKiB, fds, goroutines float64
	rounds := 0
	for b.Loop() {
		rounds++
		base := measure(b)
		d, closeD := hold(direct)
		closeD()
		base2 := settle(b, base)
		p, closeP := hold(proxied)
		closeP()
		settle(b, base)
		goKiB += (p.goKiB - base2.goKiB) - (d.goKiB - base.goKiB)
		rssKiB += (p.rssKiB - base2.rssKiB) - (d.rssKiB - base.rssKiB)
		fds += (p.fds - base2.fds) - (d.fds - base.fds)
		goroutines += (p.goroutines - base2.goroutines) - (d.goroutines - base.goroutines)
	}
	r := float64(rounds)
	b.ReportMetric(goKiB/r, "go-KiB/100conns")
	b.ReportMetric(rssKiB/r, "RSS-KiB/100conns")
	b.ReportMetric(fds/r/n, "fds/conn")
	b.ReportMetric(goroutines/r/n, "goroutines/conn")
}
