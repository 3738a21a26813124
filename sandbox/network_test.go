package sandbox

import (
	"strings"
	"testing"
)

// A Network no mode defines is refused before anything starts, rather than
// read as one of the defined ones.
func TestNetworkUnknownIsRefused(t *testing.T) {
	spec := sbxSpec("/bin/true")
	spec.Net = Network(9)
	p, err := Start(spec, sbxLogger(t))
	if err == nil {
		p.Close()
		t.Fatal("a sandbox with Network(9) started")
	}
	if msg := err.Error(); !strings.Contains(msg, "Network(9)") || !strings.Contains(msg, "NetNone, NetHost or NetEgress") {
		t.Errorf("error %q does not name the value and the modes", msg)
	}
}
