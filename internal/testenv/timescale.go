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

// raceScale stretches the waits of a race-detector build, which runs two
// to ten times slower (a 24 MiB result took the example server over 20 s
// beside the rest of the race suite).
const raceScale = 3

// Wait is d stretched by TimeScaleEnv (a whole number, default 1), and by
// raceScale under the race detector.
func Wait(d time.Duration) time.Duration {
	if raceEnabled {
		d *= raceScale
	}
	if n, err := strconv.Atoi(os.Getenv(TimeScaleEnv)); err == nil && n > 1 {
		return d * time.Duration(n)
	}
	return d
}
