package bench

import (
	"os"
	"sync/atomic"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// floodSupervisorEnv names another mcpsandbox binary to measure instead of
// this tree's, e.g. one built from an older commit, for before/after figures
// of the same floods (the hostile server always comes from this tree).
const floodSupervisorEnv = "MCPSANDBOX_BENCH_FLOOD_SUPERVISOR"

// BenchmarkFlood: the hostile server's log and relay floods through
// `mcpsandbox run` under its default confinement, at the default log level.
// Reported per flood: the supervisor's log bytes per MiB of hostile input
// and its peak RSS, beside its RSS once the session is up (the baseline).
// Targets: log bytes bounded whatever the input (a few hundred KiB per
// rate-limit window), peak RSS within a few MiB of the baseline, beyond the
// one --max-message buffer a huge line needs.
func BenchmarkFlood(b *testing.B) {
	hostile := testenv.BuildHostile(b)
	supervisor := bins.mcpsandbox
	if p := os.Getenv(floodSupervisorEnv); p != "" {
		supervisor = p
	}
	// A flood that beats the supervisor must not take the machine with it.
	testenv.OuterLimit(b, 2<<30, 4096)
	for _, f := range []struct {
		kind  string
		bytes int
	}{
		{"stderr_empty", 4 << 20},
		{"stdout_junk", 4 << 20},
		{"huge_id", 15 << 20},
		{"huge_id_invalid_utf8", 15 << 20},
	} {
		b.Run(f.kind, func(b *testing.B) {
			var logBytes, idle, peak float64
			for range b.N {
				logBytes, idle, peak = floodOnce(b, supervisor, hostile, f.kind, f.bytes)
			}
			mib := float64(f.bytes) / (1 << 20)
			b.ReportMetric(logBytes/mib, "logB-per-MiB")
			b.ReportMetric(idle, "idleRSS-MiB")
			b.ReportMetric(peak, "peakRSS-MiB")
			b.ReportMetric(peak/idle, "x-peak-vs-idle")
		})
	}
}

// floodOnce runs one session with one flood and returns the log bytes the
// whole session wrote and the supervisor's RSS before and at peak (MiB).
func floodOnce(b *testing.B, supervisor, hostile, kind string, n int) (logBytes, idle, peak float64) {
	var logged atomic.Int64
	s := startSessionLogging(b, []string{supervisor, "run", "--log-level", "info", "--", hostile}, countingWriter{&logged})
	s.call(b, "echo", map[string]any{"text": "warm"})
	idle, _ = rssMiB(b, s.cmd.Process.Pid)
	// The call returns once the server wrote the whole flood, so all but
	// a pipe buffer of it has reached the supervisor.
	s.call(b, "flood", map[string]any{"kind": kind, "bytes": n})
	_, peak = rssMiB(b, s.cmd.Process.Pid)
	if err := s.close(); err != nil {
		b.Fatalf("mcpsandbox: %v", err)
	}
	return float64(logged.Load()), idle, peak
}

type countingWriter struct{ n *atomic.Int64 }

func (w countingWriter) Write(p []byte) (int, error) {
	w.n.Add(int64(len(p)))
	return len(p), nil
}
