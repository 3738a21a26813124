package bench

import (
	"testing"
	"time"
)

// pair is a setting's cost in one run: op on two sessions of the same
// server, "on" (the setting in force) and "off", in turns (neither always
// first), after warmup rounds each. It reports each median in µs and
// their ratio as x-<on>-vs-<off>.
type pair struct {
	on, off string
	warmup  int
}

func (p pair) run(b *testing.B, on, off *session, op func(*session)) {
	sessions := []struct {
		name string
		s    *session
	}{{p.on, on}, {p.off, off}}
	for _, c := range sessions {
		for range p.warmup {
			op(c.s)
		}
	}
	got := samples{}
	b.ResetTimer()
	for i := range b.N {
		for k := range sessions {
			c := sessions[(i+k)%len(sessions)]
			start := time.Now()
			op(c.s)
			got[c.name] = append(got[c.name], time.Since(start))
		}
	}
	b.StopTimer()
	for _, c := range sessions {
		b.ReportMetric(float64(got.median(c.name))/1e3, c.name+"-µs")
	}
	b.ReportMetric(float64(got.median(p.on))/float64(got.median(p.off)), "x-"+p.on+"-vs-"+p.off)
}
