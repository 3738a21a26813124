package main

import (
	"os"
	"path/filepath"
)

// lockEnv names the lock `run` uses when neither --lock nor pins.lock
// names one (docs/pins.md): a CI job or a test keeps its pins apart from
// the user's lock.
const lockEnv = "MCPSANDBOX_LOCK"

// envLock is lockEnv's file, when it is an absolute path; "": the user's
// lock.
func envLock() string {
	if p := os.Getenv(lockEnv); filepath.IsAbs(p) {
		return p
	}
	return ""
}
