package cgroups

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/mcpsandbox/mcpsandbox/internal/pathrule"
)

var nameCounter atomic.Uint64

// uniqueName makes a cgroup name from a server's name that no other
// server of this or another supervisor uses: name, supervisor pid, counter.
func uniqueName(name string) string {
	return fmt.Sprintf("mcpsandbox-%s-%d-%d", pathrule.Element(name), os.Getpid(), nameCounter.Add(1))
}

// ownerPid reads the supervisor pid out of a name made by
// uniqueName: mcpsandbox-NAME-PID-COUNTER.
func ownerPid(name string) (int, bool) {
	if !strings.HasPrefix(name, "mcpsandbox-") {
		return 0, false
	}
	parts := strings.Split(name, "-")
	if len(parts) < 4 {
		return 0, false
	}
	if _, err := strconv.ParseUint(parts[len(parts)-1], 10, 64); err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(parts[len(parts)-2])
	return pid, err == nil && pid > 0
}
