package bench

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// samples collects durations per chain, measured interleaved so that
// machine noise falls on every chain alike.
type samples map[string][]time.Duration

func (s samples) median(name string) time.Duration {
	d := slices.Clone(s[name])
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[len(d)/2]
}

// report prints each chain's median and the ratio of mcpsandbox to the others.
func (s samples) report(b *testing.B, unit string) {
	scale := map[string]float64{"µs": 1e3, "ms": 1e6}[unit]
	for name := range s {
		b.ReportMetric(float64(s.median(name))/scale, name+"-"+unit)
	}
	ours := float64(s.median("mcpsandbox"))
	for _, base := range []string{"minrelay", "direct", "bwrap", "baseline"} {
		if m := s.median(base); m > 0 {
			b.ReportMetric(ours/float64(m), "x-vs-"+base)
		}
	}
}

// rssMiB reads a process's resident set (VmRSS) and peak (VmHWM) in MiB.
func rssMiB(b *testing.B, pid int) (rss, peak float64) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(fields[1], 64)
		switch fields[0] {
		case "VmRSS:":
			rss = kb / 1024
		case "VmHWM:":
			peak = kb / 1024
		}
	}
	return rss, peak
}
