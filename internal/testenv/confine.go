package testenv

import (
	"sync"
	"testing"
)

var confinement struct {
	once    sync.Once
	problem error
}

// RequireConfinement skips t under -short when this user cannot confine a
// server on this machine, as probe (the sandbox's doctor) finds: the quick
// loop is for ordinary users without root or delegated cgroups. Without
// -short it does nothing, so a machine that should confine and cannot
// fails the confined tests instead of skipping them. probe runs once per
// test binary.
func RequireConfinement(t testing.TB, probe func() error) {
	t.Helper()
	if !testing.Short() {
		return
	}
	confinement.once.Do(func() { confinement.problem = probe() })
	if confinement.problem != nil {
		t.Skipf("-short: this user cannot confine servers here, so the confined tests are left to the full suite (scripts/test.sh): %v", confinement.problem)
	}
}
