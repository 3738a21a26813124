package packaging

import (
	"os"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/daemon/config"
)

// The example config the packages install is one the daemon reads: the
// service starts with it (keeping no servers) until servers are added.
func TestExampleConfigIsADaemonConfig(t *testing.T) {
	data, err := os.ReadFile("daemon.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := config.Parse("daemon.json", data); err != nil {
		t.Errorf("the daemon refuses packaging/daemon.json: %v", err)
	}
}
