package testnet

import (
	"os/exec"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/testnet/netclient"
)

// The egress benchmark's baseline: a direct connection from an unconfined
// process (mcpnet, in the client namespace) to the test host. The confined
// figures come from the same tools through mcpsandbox run, in the same run.

func directSession(b *testing.B) (*Env, *Session) {
	e := Start(b, Options{})
	kit := BuildKit(b, e.CA.Path)
	argv := ServerCommand(kit)
	return e, e.Open(b, exec.Command(argv[0], argv[1:]...), e.StartDirect)
}

// BenchmarkDirectConnect: one TCP connect (and close) per op.
func BenchmarkDirectConnect(b *testing.B) {
	_, s := directSession(b)
	b.ResetTimer()
	m := s.Measure(b, netclient.MeasureArgs{URL: "http://" + APIName + "/", Connects: b.N})
	b.ReportMetric(float64(m.MedianConnect().Nanoseconds()), "median-ns/connect")
}

// BenchmarkDirectBulk256MiB: one 256 MiB download per op.
func BenchmarkDirectBulk256MiB(b *testing.B) {
	_, s := directSession(b)
	b.SetBytes(256 << 20)
	b.ResetTimer()
	for b.Loop() {
		s.Measure(b, netclient.MeasureArgs{URL: "http://" + APIName + "/", Bytes: 256 << 20})
	}
}
