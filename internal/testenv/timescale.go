package testenv

import (
	"os"
	"strconv"
	"time"
)

// TimeScaleEnv stretches the tests' waits on a slow machine: the guest tier
// sets it, since software emulation runs a Node server's start 10–20×
// slower. The waits bound how long a broken test hangs; none stands in for
// synchronisation.
const TimeScaleEnv = "MCPSANDBOX_TEST_TIME_SCALE"

// Wait is d stretched by TimeScaleEnv (a whole number, default 1).
func Wait(d time.Duration) time.Duration {
	if n, err := strconv.Atoi(os.Getenv(TimeScaleEnv)); err == nil && n > 1 {
		return d * time.Duration(n)
	}
	return d
}
